/*
 * rdma-core 44.0's private libmlx5 layouts (providers/mlx5/mlx5.h of tag v44.0), only what the data path
 * touches, declared here (no rdma-core source) and pinned by _Static_assert. Shared by the test-only oracle
 * (mlx5_oracle.c, a process) and the in-process library of the benchmarks (mlx5_inproc.c). The archive's symbol
 * prefix (rdmacore44_0_) names the version: linking fails on any other release, and the Java builders check it
 * first with a message.
 */
#ifndef PANVERBS_MLX5_RDMACORE44_H
#define PANVERBS_MLX5_RDMACORE44_H
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RC(name) rdmacore44_0_##name

/* ---- rdma-core 44.0 private layouts (providers/mlx5/mlx5.h), only what the data path touches ---- */
struct o_spinlock { pthread_spinlock_t lock; int in_use; int need_lock; };
struct o_buf { void *buf; char rest[56]; };
struct o_resource { int type; uint32_t rsn; };
struct o_wq {
    uint64_t *wrid; unsigned *wqe_head; struct o_spinlock lock;
    unsigned wqe_cnt, max_post, head, tail, cur_post;
    int max_gs, qp_state_max_gs, wqe_shift, offset;
    void *qend; uint32_t *wr_data;
};
struct o_verbs_qp { union { struct ibv_qp qp; struct ibv_qp_ex qp_ex; }; uint32_t comp_mask; void *xrcd; };
struct o_bf { void *reg; int need_lock; struct o_spinlock lock; unsigned offset, buf_size, uuarn; char rest[116]; };
struct o_qp {
    struct o_resource rsc; struct o_verbs_qp verbs_qp; struct mlx5dv_qp_ex dv_qp; struct ibv_qp *ibv_qp;
    struct o_buf buf; int max_inline_data; int buf_size; struct o_buf sq_buf; int sq_buf_size; struct o_bf *bf;
    bool inl_wqe; uint8_t cur_setters_cnt, num_mkey_setters, fm_cache_rb;
    int err, nreq; uint32_t cur_size, cur_post_rb;
    void *cur_eth, *cur_data, *cur_ctrl, *cur_mkey;
    uint8_t fm_cache, sq_signal_bits; void *sq_start; struct o_wq sq;
    uint32_t *db; bool custom_db; struct o_wq rq; int wq_sig; uint32_t qp_cap_cache; int atomics_enabled;
    uint32_t max_tso; uint16_t max_tso_header; int rss_qp; uint32_t flags;
    enum mlx5dv_dc_type dc_type; /* MLX5DV_DCTYPE_DCI for a DC initiator */
    char rest[40];
};
struct o_cq {
    union { struct ibv_cq cq; struct ibv_cq_ex cq_ex; } verbs_cq;
    struct o_buf buf_a, buf_b; struct o_buf *active_buf, *resize_buf; int resize_cqes, active_cqes;
    struct o_spinlock lock; uint32_t cqn, cons_index; uint32_t *dbrec; bool custom_db; int arm_sn, cqe_sz,
    resize_cqe_sz, stall_next_poll, stall_enable; uint64_t stall_last_count; int stall_adaptive_enable, stall_cycles;
    void *cur_rsc, *cur_srq, *cqe64; uint32_t flags; int cached_opcode;
    char rest[48];
};
_Static_assert(sizeof(struct o_wq) == 80 && offsetof(struct o_wq, qend) == 64, "mlx5_wq (rdma-core 44)");
_Static_assert(sizeof(struct o_bf) == 152 && offsetof(struct o_bf, uuarn) == 32, "mlx5_bf (rdma-core 44)");
_Static_assert(sizeof(struct o_verbs_qp) == 368, "verbs_qp (rdma-core 44)");
_Static_assert(offsetof(struct o_qp, ibv_qp) == 480 && offsetof(struct o_qp, bf) == 632
               && offsetof(struct o_qp, fm_cache) == 696 && offsetof(struct o_qp, sq_start) == 704
               && offsetof(struct o_qp, sq) == 712 && offsetof(struct o_qp, db) == 792
               && offsetof(struct o_qp, rq) == 808 && offsetof(struct o_qp, atomics_enabled) == 896
               && offsetof(struct o_qp, flags) == 912 && offsetof(struct o_qp, dc_type) == 916
               && sizeof(struct o_qp) == 960, "mlx5_qp (rdma-core 44)");
/* struct mlx5_ah: mlx5_send_wr_set_dc_addr copies av (struct mlx5_wqe_av of mlx5dv.h) into the datagram segment */
struct o_ah { struct ibv_ah ibv_ah; struct mlx5_wqe_av av; bool kern_ah; pthread_mutex_t mutex; uint8_t is_global;
              void *ah_qp_mapping; };
_Static_assert(offsetof(struct o_ah, av) == 24 && sizeof(struct mlx5_wqe_av) == 48
               && offsetof(struct o_ah, kern_ah) == 72 && sizeof(struct o_ah) == 136, "mlx5_ah (rdma-core 44)");
_Static_assert(offsetof(struct o_cq, buf_a) == 288 && offsetof(struct o_cq, lock) == 440
               && offsetof(struct o_cq, cons_index) == 456 && offsetof(struct o_cq, dbrec) == 464
               && offsetof(struct o_cq, cqe_sz) == 480 && offsetof(struct o_cq, stall_enable) == 492
               && offsetof(struct o_cq, cur_rsc) == 512 && sizeof(struct o_cq) == 592, "mlx5_cq (rdma-core 44)");
/* struct mlx5_context (267904 bytes): offsets of the fields the data path reads */
enum {
    CTX_SIZE = 267904, CTX_IBV_CONTEXT = 320, CTX_PREFER_BF = 676, CTX_SHUT_UP_BF = 680, CTX_QP_TABLE = 688,
    CTX_UIDX_TABLE = 131840,
    CTX_DBG_FP = 267312, CTX_CQE_VERSION = 267392, CTX_CQ_UAR_REG = 267776,
};

#endif
