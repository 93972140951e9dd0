/*
 * libmlx5 (rdma-core 44.0) in this process, for the benchmarks of dev.panverbs.core.mlx5 (perf's
 * Mlx5DirectBenchmark) and the test that proves they all do the same work (Mlx5InProcessTest): one shared library
 * of this file, the device model (mlx5_device_model.c) and the qp.c.o/cq.c.o members of the installed libmlx5.a,
 * built by Mlx5InProcess.java. Nothing of rdma-core's source is here.
 *
 * Why a shared library is possible: the two objects are compiled for a PIE executable, so they reach `stderr`
 * through R_X86_64_PC32 (a copy relocation in the executable), which a shared object cannot resolve against libc.
 * The builder renames that reference with `objcopy --redefine-sym stderr=panverbs_mlx5_stderr`; this file defines
 * it with hidden visibility (set to libc's stderr at load), so the relocation binds inside the library. The other
 * PC32 data references (mlx5_freeze_on_error_cqe, the stall tunables) bind to hidden or version-script-local
 * symbols for the same reason; only mlx5ip_* and model_* are exported.
 *
 * One fake libmlx5 QP and CQ (rdma-core 44 layouts, mlx5_rdmacore44.h) over memory the caller gives: the same send
 * ring, doorbell record, BlueFlame register, CQ buffer and CQ doorbell record that the Java DirectSendQueue and
 * DirectCompletionQueue of the benchmark use, consumed by the same device model. Each mlx5ip_* operation is one
 * downcall: build and post a chain of n RDMA WRITEs (through mlx5_post_send, the ibv_wr_* builders, or the
 * hand-written direct writer), run the model's doorbell, and poll the completions (mlx5_poll_cq, or the
 * hand-written CQE reader). Returns the sum of wr_id + status + opcode of the completions (the fields libmlx5 defines
 * for a successful RDMA WRITE), or UINT64_MAX on an error.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlx5_rdmacore44.h"

#define HIDDEN __attribute__((visibility("hidden")))

/* ---- what qp.c.o and cq.c.o import ---- */
HIDDEN FILE *panverbs_mlx5_stderr; /* their `stderr`, renamed by objcopy */
__attribute__((constructor)) static void init_stderr(void) { panverbs_mlx5_stderr = stderr; }
HIDDEN int RC(mlx5_freeze_on_error_cqe) = 0;
#define STUB(name) HIDDEN void name(void); void name(void) { \
    fprintf(stderr, "mlx5_inproc: unexpected call to " #name "\n"); abort(); }
STUB(rdmacore44_0_mlx5_alloc_prefered_buf) STUB(rdmacore44_0_mlx5_complete_odp_fault)
STUB(rdmacore44_0_mlx5_copy_to_recv_srq) STUB(rdmacore44_0_mlx5_find_mkey) STUB(rdmacore44_0_mlx5_find_srq)
STUB(rdmacore44_0_mlx5_free_actual_buf) STUB(rdmacore44_0_mlx5_free_srq_wqe) STUB(rdmacore44_0_mlx5_get_alloc_type)
STUB(rdmacore44_0_mlx5_get_cmd_status_err)
HIDDEN int mlx5dv_devx_qp_query(struct ibv_qp *q, const void *in, size_t inlen, void *out, size_t outlen) {
    fprintf(stderr, "mlx5_inproc: unexpected call to mlx5dv_devx_qp_query\n"); abort();
}
HIDDEN int mlx5dv_get_clock_info(struct ibv_context *c, struct mlx5dv_clock_info *info) {
    fprintf(stderr, "mlx5_inproc: unexpected call to mlx5dv_get_clock_info\n"); abort();
}
HIDDEN struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp) { return &((struct o_verbs_qp *)qp)->qp_ex; }

int RC(mlx5_post_send)(struct ibv_qp *, struct ibv_send_wr *, struct ibv_send_wr **);
int RC(mlx5_poll_cq)(struct ibv_cq *, int, struct ibv_wc *);
int RC(mlx5_qp_fill_wr_pfns)(struct o_qp *, const struct ibv_qp_init_attr_ex *, const struct mlx5dv_qp_init_attr *);
int model_doorbell(void);
void model_rewind(uint32_t wqebbs);

/* ---- the fake objects ---- */
static uint8_t *ctx;
static struct o_qp *qp;
static struct o_bf bf;
static struct o_cq *cq;
/* the hand-written direct path's own state */
static struct {
    uint8_t *sq, *bf_reg, *cq_buf; uint32_t *dbrec, *cq_dbrec;
    uint32_t wqe_cnt, ncqe, qpn, bf_size, bf_offset, cur_post, cons_index;
    uint64_t *wrid;
} d;

static void table_put(uint32_t qpn, struct o_qp *q) {
    struct { void **table; int refcnt; } *t = (void *)(ctx + CTX_QP_TABLE);
    int tind = qpn >> 12;
    if (!t[tind].table) t[tind].table = calloc(4096, sizeof(void *));
    t[tind].table[qpn & 0xfff] = q;
    t[tind].refcnt = 1;
}

/*
 * (Re)creates the fake context, QP (RC, RTS, max_gs 1, no inline, uuarn 1, prefer_bf 0) and CQ over the caller's
 * memory, with the counters at 0: sq = wqe_cnt * 64 bytes, dbrec = 8, bf_reg = 2 * bf_size, cq_buf = ncqe * 64
 * (initialised by the caller as libmlx5 does: opcode INVALID, owner 1), cq_dbrec = 8. Returns 0 or -1.
 */
int mlx5ip_setup(uint8_t *sq, uint32_t wqe_cnt, uint32_t *dbrec, uint8_t *bf_reg, uint32_t bf_size, uint32_t qpn,
                 uint8_t *cq_buf, uint32_t ncqe, uint32_t *cq_dbrec) {
    if (!ctx) ctx = calloc(1, CTX_SIZE);
    *(void **)(ctx + CTX_DBG_FP) = NULL;
    *(int *)(ctx + CTX_CQE_VERSION) = 0;
    *(int *)(ctx + CTX_PREFER_BF) = 0;
    *(int *)(ctx + CTX_SHUT_UP_BF) = 0;
    struct ibv_context *ibctx = (struct ibv_context *)(ctx + CTX_IBV_CONTEXT);
    if (!cq) cq = calloc(1, sizeof *cq);
    memset(cq, 0, sizeof *cq);
    cq->verbs_cq.cq.context = ibctx;
    cq->verbs_cq.cq.cqe = ncqe - 1;
    cq->buf_a.buf = cq_buf;
    cq->active_buf = &cq->buf_a;
    cq->cqe_sz = 64;
    cq->cqn = 0x77;
    cq->dbrec = cq_dbrec;
    if (!qp) {
        qp = calloc(1, sizeof *qp);
    } else {
        free(qp->sq.wrid); free(qp->sq.wqe_head); free(qp->sq.wr_data); free(d.wrid);
        memset(qp, 0, sizeof *qp);
    }
    qp->rsc.type = 0; /* MLX5_RSC_TYPE_QP */
    qp->rsc.rsn = qpn;
    qp->ibv_qp = &qp->verbs_qp.qp;
    qp->verbs_qp.qp.context = ibctx;
    qp->verbs_qp.qp.qp_num = qpn;
    qp->verbs_qp.qp.qp_type = IBV_QPT_RC;
    qp->verbs_qp.qp.state = IBV_QPS_RTS;
    qp->verbs_qp.qp.send_cq = &cq->verbs_cq.cq;
    qp->verbs_qp.qp.recv_cq = &cq->verbs_cq.cq;
    qp->atomics_enabled = 1;
    qp->sq.wqe_cnt = wqe_cnt;
    qp->sq.max_post = wqe_cnt;
    qp->sq.max_gs = qp->sq.qp_state_max_gs = 1;
    qp->sq.wqe_shift = 6;
    qp->sq.wrid = calloc(wqe_cnt, sizeof(uint64_t));
    qp->sq.wqe_head = calloc(wqe_cnt, sizeof(unsigned));
    qp->sq.wr_data = calloc(wqe_cnt, sizeof(uint32_t));
    qp->sq_start = sq;
    qp->sq.qend = sq + (size_t)wqe_cnt * 64;
    qp->db = dbrec;
    memset(&bf, 0, sizeof bf);
    bf.reg = bf_reg;
    bf.buf_size = bf_size;
    bf.uuarn = 1;
    qp->bf = &bf;
    table_put(qpn, qp);
    struct ibv_qp_init_attr_ex attr = { .qp_type = IBV_QPT_RC, .comp_mask = IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
        .send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE };
    if (RC(mlx5_qp_fill_wr_pfns)(qp, &attr, NULL)) return -1;
    d.sq = sq; d.bf_reg = bf_reg; d.cq_buf = cq_buf; d.dbrec = dbrec; d.cq_dbrec = cq_dbrec;
    d.wqe_cnt = wqe_cnt; d.ncqe = ncqe; d.qpn = qpn; d.bf_size = bf_size;
    d.bf_offset = d.cur_post = d.cons_index = 0;
    d.wrid = calloc(wqe_cnt, sizeof(uint64_t));
    return 0;
}

/* mlx5_poll_cq until `want` completions were read */
static uint64_t mlx5_drain(int want) {
    struct ibv_wc wc[16];
    uint64_t sum = 0;
    while (want > 0) {
        int got = RC(mlx5_poll_cq)(&cq->verbs_cq.cq, want < 16 ? want : 16, wc);
        if (got <= 0) return UINT64_MAX;
        for (int i = 0; i < got; i++) sum += wc[i].wr_id + wc[i].status + wc[i].opcode;
        want -= got;
    }
    return sum;
}

/* ibv_post_send (mlx5_post_send) of n RDMA WRITEs of 64 bytes, the last (or every) one signaled; model; poll */
uint64_t mlx5ip_post_send(int n, int all_signaled, uint64_t wr_id, uint64_t laddr, uint32_t lkey, uint64_t raddr,
                          uint32_t rkey) {
    struct ibv_send_wr wrs[64], *bad;
    struct ibv_sge sges[64];
    for (int i = 0; i < n; i++) {
        sges[i].addr = laddr + i * 64;
        sges[i].length = 64;
        sges[i].lkey = lkey;
        wrs[i].wr_id = wr_id + i;
        wrs[i].next = i + 1 < n ? &wrs[i + 1] : NULL;
        wrs[i].sg_list = &sges[i];
        wrs[i].num_sge = 1;
        wrs[i].opcode = IBV_WR_RDMA_WRITE;
        wrs[i].send_flags = all_signaled || i == n - 1 ? IBV_SEND_SIGNALED : 0;
        wrs[i].wr.rdma.remote_addr = raddr + i * 64;
        wrs[i].wr.rdma.rkey = rkey;
    }
    if (RC(mlx5_post_send)(qp->ibv_qp, wrs, &bad)) return UINT64_MAX;
    if (model_doorbell() != n) return UINT64_MAX;
    return mlx5_drain(all_signaled ? n : 1);
}

/* the same chain through ibv_wr_start, ibv_wr_rdma_write, ibv_wr_set_sge, ibv_wr_complete; model; poll */
uint64_t mlx5ip_wr(int n, int all_signaled, uint64_t wr_id, uint64_t laddr, uint32_t lkey, uint64_t raddr,
                   uint32_t rkey) {
    struct ibv_qp_ex *x = &qp->verbs_qp.qp_ex;
    ibv_wr_start(x);
    for (int i = 0; i < n; i++) {
        x->wr_id = wr_id + i;
        x->wr_flags = all_signaled || i == n - 1 ? IBV_SEND_SIGNALED : 0;
        ibv_wr_rdma_write(x, rkey, raddr + i * 64);
        ibv_wr_set_sge(x, lkey, laddr + i * 64, 64);
    }
    if (ibv_wr_complete(x)) return UINT64_MAX;
    if (model_doorbell() != n) return UINT64_MAX;
    return mlx5_drain(all_signaled ? n : 1);
}

/*
 * The physical limit: a hand-written direct writer of the same WQEs (control, remote-address and data segment, one
 * WQEBB each), the doorbell record, an 8-byte doorbell with libmlx5's barriers (sfence around the MMIO write), and a
 * hand-written CQE reader (owner bit, lfence, wr_id by wqe_counter, consumer index record). No checks, no tracking.
 */
uint64_t mlx5ip_direct(int n, int all_signaled, uint64_t wr_id, uint64_t laddr, uint32_t lkey, uint64_t raddr,
                       uint32_t rkey) {
    uint32_t mask = d.wqe_cnt - 1, qpn_ds = htobe32(d.qpn << 8 | 3);
    uint8_t *ctrl = NULL;
    for (int i = 0; i < n; i++) {
        uint32_t idx = d.cur_post & mask;
        ctrl = d.sq + ((size_t)idx << 6);
        uint32_t *c = (uint32_t *)ctrl;
        c[0] = htobe32((d.cur_post & 0xffff) << 8 | MLX5_OPCODE_RDMA_WRITE);
        c[1] = qpn_ds;
        c[2] = htobe32(all_signaled || i == n - 1 ? MLX5_WQE_CTRL_CQ_UPDATE : 0);
        c[3] = 0;
        *(uint64_t *)(ctrl + 16) = htobe64(raddr + i * 64);
        c[6] = htobe32(rkey);
        c[7] = 0;
        c[8] = htobe32(64);
        c[9] = htobe32(lkey);
        *(uint64_t *)(ctrl + 40) = htobe64(laddr + i * 64);
        d.wrid[idx] = wr_id + i;
        d.cur_post++;
    }
    asm volatile("" ::: "memory");                  /* udma_to_device_barrier */
    d.dbrec[1] = htobe32(d.cur_post & 0xffff);
    asm volatile("sfence" ::: "memory");            /* mmio_wc_start */
    *(volatile uint64_t *)(d.bf_reg + d.bf_offset) = *(uint64_t *)ctrl;
    asm volatile("sfence" ::: "memory");            /* mmio_flush_writes */
    d.bf_offset ^= d.bf_size;
    if (model_doorbell() != n) return UINT64_MAX;
    uint64_t sum = 0;
    for (int want = all_signaled ? n : 1; want > 0; want--) {
        uint8_t *e = d.cq_buf + ((size_t)(d.cons_index & (d.ncqe - 1)) << 6);
        uint8_t op_own = *(volatile uint8_t *)(e + 63);
        if ((op_own >> 4) == MLX5_CQE_INVALID || !(op_own & 1) != !(d.cons_index & d.ncqe)) return UINT64_MAX;
        d.cons_index++;
        asm volatile("lfence" ::: "memory");        /* udma_from_device_barrier */
        if ((op_own >> 4) != MLX5_CQE_REQ) return UINT64_MAX;
        uint16_t counter = be16toh(*(uint16_t *)(e + 60));
        sum += d.wrid[counter & mask] + 0 /* IBV_WC_SUCCESS */ + IBV_WC_RDMA_WRITE;
    }
    d.cq_dbrec[0] = htobe32(d.cons_index & 0xffffff);
    return sum;
}

/*
 * The device model's own cost, to subtract: the last n WQEs written are consumed again (model_rewind) and their
 * CQEs written; the hand-written reader takes them without decoding. Call after one mlx5ip_direct of the same shape.
 */
uint64_t mlx5ip_model_only(int n, int all_signaled) {
    model_rewind((uint32_t)n);
    if (model_doorbell() != n) return UINT64_MAX;
    d.cons_index += all_signaled ? n : 1;
    d.cq_dbrec[0] = htobe32(d.cons_index & 0xffffff);
    return 0;
}

/* ---- UMR (the host proof of dev.panverbs.core.mlx5's IndirectMkey/UmrQueuePair against libmlx5's builders) ---- */

/* rdma-core 44.0's struct mlx5_mkey (providers/mlx5/mlx5.h), no source: the fields the UMR builders read/write */
struct o_mkey {
    struct mlx5dv_mkey dv_mkey; void *devx_obj; uint16_t num_desc; uint64_t length; void *sig; void *crypto;
};
_Static_assert(offsetof(struct o_mkey, num_desc) == 16 && offsetof(struct o_mkey, length) == 24
               && sizeof(struct o_mkey) == 48, "mlx5_mkey (rdma-core 44)");

/*
 * After mlx5ip_setup: re-fills the fake QP's builders with the mlx5dv UMR send ops (MR_INTERLEAVED | MR_LIST, as
 * mlx5dv_create_qp does for them) plus LOCAL_INV, and sets its max_inline_data; out[0] = its ibv_qp_ex,
 * out[1] = its mlx5dv_qp_ex. Returns 0 or -1.
 */
int mlx5ip_umr_setup(int max_inline_data, void **out) {
    struct ibv_qp_init_attr_ex attr = { .qp_type = IBV_QPT_RC, .comp_mask = IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
        .send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_LOCAL_INV };
    struct mlx5dv_qp_init_attr dv = { .comp_mask = MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS,
        .send_ops_flags = MLX5DV_QP_EX_WITH_MR_INTERLEAVED | MLX5DV_QP_EX_WITH_MR_LIST };
    if (RC(mlx5_qp_fill_wr_pfns)(qp, &attr, &dv)) return -1;
    qp->max_inline_data = max_inline_data;
    out[0] = &qp->verbs_qp.qp_ex;
    out[1] = &qp->dv_qp;
    return 0;
}

/* a fake struct mlx5_mkey with lkey = rkey = key and num_desc translation entries */
void *mlx5ip_umr_mkey(uint32_t key, uint16_t num_desc) {
    struct o_mkey *m = calloc(1, sizeof(*m));
    m->dv_mkey.lkey = m->dv_mkey.rkey = key;
    m->num_desc = num_desc;
    return m;
}

/* the mkey length libmlx5 recorded (mkey->length) */
uint64_t mlx5ip_umr_mkey_length(void *mkey) { return ((struct o_mkey *) mkey)->length; }

/* the send queue's producer index (WQEBBs) and fm_cache; retires every posted WQE (sq.tail = sq.head) */
uint32_t mlx5ip_umr_state(uint32_t *fm_cache) {
    *fm_cache = qp->fm_cache;
    qp->sq.tail = qp->sq.head;
    return qp->sq.cur_post;
}
