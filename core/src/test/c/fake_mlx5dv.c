/*
 * The fake provider (fake_provider.c, included) plus the mlx5dv_qp_ex UMR builders the host tests of
 * dev.panverbs.core.mlx5's indirect mkeys call (IndirectMkeyHostTest): wr_mr_interleaved and wr_mr_list build one
 * WQE of opcode IBV_WR_DRIVER1 (completing as IBV_WC_DRIVER1, as mlx5's UMR does) on the fake QP and record their
 * arguments, the layout array copied, for the test to read. No rdma-core source; built by the test with gcc.
 */
#include "fake_provider.c"
#include <infiniband/mlx5dv.h>

struct fake_dv {
    struct mlx5dv_qp_ex dv;
    struct ibv_qp_ex *qp;
};

/* what the last UMR builder call received */
struct fake_umr {
    uint64_t wr_id;
    uint32_t kind; /* 1 interleaved, 2 list */
    uint32_t mkey_lkey, access, repeat, n, wr_flags, calls, pad;
    uint8_t data[24 * 1024];
};
static struct fake_umr umr;

static void record(struct mlx5dv_qp_ex *dv, struct mlx5dv_mkey *mkey, uint32_t access, uint32_t repeat, uint16_t n,
                   const void *data, size_t entry_size, uint32_t kind) {
    struct ibv_qp_ex *ex = ((struct fake_dv *) dv)->qp;
    struct fake_wqe *w = build(ex, IBV_WR_DRIVER1);
    w->imm = mkey->lkey;
    umr.wr_id = ex->wr_id;
    umr.kind = kind;
    umr.mkey_lkey = mkey->lkey;
    umr.access = access;
    umr.repeat = repeat;
    umr.n = n;
    umr.wr_flags = ex->wr_flags;
    umr.calls++;
    size_t len = (size_t) n * entry_size;
    memcpy(umr.data, data, len < sizeof(umr.data) ? len : sizeof(umr.data));
}

static void fake_wr_mr_interleaved(struct mlx5dv_qp_ex *dv, struct mlx5dv_mkey *mkey, uint32_t access,
                                   uint32_t repeat, uint16_t n, struct mlx5dv_mr_interleaved *data) {
    record(dv, mkey, access, repeat, n, data, sizeof(*data), 1);
}

static void fake_wr_mr_list(struct mlx5dv_qp_ex *dv, struct mlx5dv_mkey *mkey, uint32_t access, uint16_t n,
                            struct ibv_sge *sge) {
    record(dv, mkey, access, 0, n, sge, sizeof(*sge), 2);
}

/* the mlx5dv_qp_ex of a fake QP (what mlx5dv_qp_ex_from_ibv_qp_ex returns for libmlx5's) */
struct mlx5dv_qp_ex *fake_dv_qp_ex(struct ibv_qp_ex *qp) {
    struct fake_dv *d = calloc(1, sizeof(*d));
    d->qp = qp;
    d->dv.wr_mr_interleaved = fake_wr_mr_interleaved;
    d->dv.wr_mr_list = fake_wr_mr_list;
    return &d->dv;
}

struct fake_umr *fake_last_umr(void) { return &umr; }
