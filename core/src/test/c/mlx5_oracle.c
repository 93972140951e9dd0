/*
 * Test-only oracle for dev.panverbs.core.mlx5: runs libmlx5's own data-path code (the qp.c.o and cq.c.o members
 * of the installed libmlx5.a, rdma-core 44.0) on fake QP/CQ/context objects in plain memory, driven by a line
 * script on stdin, and prints what the provider wrote (send ring, doorbell record, BlueFlame/doorbell register)
 * and what it decoded (struct ibv_wc). Built and run by Mlx5Oracle.java; nothing of rdma-core's source is here.
 *
 * The provider's internal structures are private to rdma-core, so the few this needs are declared in
 * mlx5_rdmacore44.h with their rdma-core 44.0 layouts (providers/mlx5/mlx5.h of tag v44.0), pinned by _Static_assert. The archive's
 * symbol prefix (rdmacore44_0_) names the version: linking fails on any other release, and Mlx5Oracle checks it
 * first with a message.
 *
 * Script (one command per line, numbers in C notation):
 *   Q wqe_cnt max_post max_gs max_inline qpn sq_signal_bits bf_size uuarn prefer_bf shut_up_bf cur_post
 *       new fake RC QP: ring filled with 0xEE, bf register and dbrec zeroed, head = tail = cur_post
 *   T tail                 sq.tail = tail (completions retired)
 *   P n  + n lines "W wr_id opcode send_flags imm_or_inv raddr rkey swap compare_add nsge {addr len lkey}*"
 *       mlx5_post_send of the chain (an inline SGE's addr is an offset into the pattern buffer, see pattern())
 *       prints "R rc bad cur_post head bf_offset", "S first nbb hex" (the WQEBBs from the old cur_post),
 *       "H fnv64-of-whole-ring", "D dbrec-hex", "B bf-register-hex"; the bf register is zeroed before each post
 *   X n + n lines "W ..." the same chain through ibv_wr_start, ibv_wr_<op>, ibv_wr_set_<sge|inline>, ibv_wr_complete
 *   C ncqe qpn sq_wqe_cnt rq_wqe_cnt [uidx]   new fake CQ of ncqe 64-byte CQEs (opcode INVALID) and its QP;
 *                          with a user index, CQE version 1 (mlx5_poll_cq_v1, the QP found by uidx)
 *   E slot hex128          writes 64 CQE bytes at slot
 *   L n                    mlx5_poll_cq(n): "N rc cons_index dbrec0" then "WC wr_id status opcode vendor_err
 *                          byte_len imm qp_num src_qp wc_flags pkey_index slid sl dlid_path_bits" per completion,
 *                          fields the provider left unwritten printed as their 0xCC fill
 *   U rq_cnt stride max_post head   gives the QP a receive queue (rq_cnt WQEs of stride bytes, filled with 0xEE)
 *   K tail                 rq.tail = tail (receives completed)
 *   G n + n lines "W ..."  mlx5_post_recv of the chain (opcode, flags and remote fields ignored): "R rc bad head",
 *                          "S first n hex" (the WQEs from the old head), "H fnv64-of-whole-rq", "D dbrec-hex"
 *   A solicited            mlx5_arm_cq: "Y dbrec1 uar-doorbell-hex"
 *   V n                    mlx5_cq_event n times (arm_sn += n)
 *   Z                      makes the QP a DC initiator (qp_type IBV_QPT_DRIVER, dc_type MLX5DV_DCTYPE_DCI)
 *   J i hex96              fake struct mlx5_ah number i (< 16) whose av holds these 48 bytes
 *   Y n + n pairs of lines "W ..." and "M ah dctn dc_key [stream]": the DCI chain through ibv_wr_start,
 *                          ibv_wr_<op>, mlx5dv_wr_set_dc_addr (with a stream: mlx5dv_wr_set_dc_addr_stream),
 *                          ibv_wr_set_<sge|inline>, ibv_wr_complete; output as P's
 */
#define _GNU_SOURCE
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <endian.h>

#include "mlx5_rdmacore44.h"

/* ---- the symbols qp.c.o and cq.c.o import from the rest of libmlx5/libibverbs ---- */
int RC(mlx5_freeze_on_error_cqe) = 0;
#define STUB(name) void name(void); void name(void) { fprintf(stderr, "oracle: unexpected call to " #name "\n"); abort(); }
STUB(rdmacore44_0_mlx5_alloc_prefered_buf) STUB(rdmacore44_0_mlx5_complete_odp_fault)
STUB(rdmacore44_0_mlx5_copy_to_recv_srq) STUB(rdmacore44_0_mlx5_find_mkey) STUB(rdmacore44_0_mlx5_find_srq)
STUB(rdmacore44_0_mlx5_free_actual_buf) STUB(rdmacore44_0_mlx5_free_srq_wqe) STUB(rdmacore44_0_mlx5_get_alloc_type)
STUB(rdmacore44_0_mlx5_get_cmd_status_err)
int mlx5dv_devx_qp_query(struct ibv_qp *q, const void *in, size_t inlen, void *out, size_t outlen) {
    fprintf(stderr, "oracle: unexpected call to mlx5dv_devx_qp_query\n"); abort();
}
int mlx5dv_get_clock_info(struct ibv_context *c, struct mlx5dv_clock_info *info) {
    fprintf(stderr, "oracle: unexpected call to mlx5dv_get_clock_info\n"); abort();
}
struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp) { return &((struct o_verbs_qp *)qp)->qp_ex; }

int RC(mlx5_post_send)(struct ibv_qp *, struct ibv_send_wr *, struct ibv_send_wr **);
int RC(mlx5_poll_cq)(struct ibv_cq *, int, struct ibv_wc *);
int RC(mlx5_poll_cq_v1)(struct ibv_cq *, int, struct ibv_wc *);
static int cq_v1;               /* the CQ polls as CQE version 1 (user indexes) */
int RC(mlx5_arm_cq)(struct ibv_cq *, int);
int RC(mlx5_post_recv)(struct ibv_qp *, struct ibv_recv_wr *, struct ibv_recv_wr **);
void RC(mlx5_cq_event)(struct ibv_cq *);
int RC(mlx5_qp_fill_wr_pfns)(struct o_qp *, const struct ibv_qp_init_attr_ex *, const struct mlx5dv_qp_init_attr *);

/* ---- fake objects ---- */
static uint8_t *ctx;            /* struct mlx5_context */
static struct ibv_context *ibctx;
static struct o_qp *qp;
static struct o_bf bf;
static uint8_t *ring;           /* send queue buffer */
static size_t ring_bytes;
static uint8_t *bf_reg;         /* 2 * bf_size: the two BlueFlame halves */
static uint32_t dbrec[2];
static struct o_cq *cq;
static uint8_t *cq_buf;
static uint32_t cq_dbrec[2];
static uint8_t cq_uar[64];
static uint8_t pattern_buf[1 << 16];
static struct o_qp *cq_qp;      /* the QP the CQ's completions name */

static void pattern(void) {
    for (size_t i = 0; i < sizeof pattern_buf; i++) pattern_buf[i] = (uint8_t)(i * 131 + (i >> 8) * 7 + 1);
}

static void hex(const char *tag, const uint8_t *p, size_t n) {
    static const char d[] = "0123456789abcdef";
    fputs(tag, stdout);
    fputc(' ', stdout);
    for (size_t i = 0; i < n; i++) { fputc(d[p[i] >> 4], stdout); fputc(d[p[i] & 15], stdout); }
    fputc('\n', stdout);
}

static uint64_t fnv(const uint8_t *p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) { h ^= p[i]; h *= 0x100000001b3ULL; }
    return h;
}

static void table_put(uint32_t qpn, struct o_qp *q) {
    struct { void **table; int refcnt; } *t = (void *)(ctx + CTX_QP_TABLE);
    int tind = qpn >> 12;
    if (!t[tind].table) t[tind].table = calloc(4096, sizeof(void *));
    t[tind].table[qpn & 0xfff] = q;
    t[tind].refcnt = 1;
}

static void uidx_put(uint32_t uidx, struct o_qp *q) {
    struct { void **table; int refcnt; } *t = (void *)(ctx + CTX_UIDX_TABLE);
    int tind = uidx >> 12;
    if (!t[tind].table) t[tind].table = calloc(4096, sizeof(void *));
    t[tind].table[uidx & 0xfff] = q;
    t[tind].refcnt = 1;
}

static void new_ctx(void) {
    ctx = calloc(1, CTX_SIZE);
    ibctx = (struct ibv_context *)(ctx + CTX_IBV_CONTEXT);
    *(void **)(ctx + CTX_DBG_FP) = NULL;       /* mlx5_err() prints nothing */
    *(int *)(ctx + CTX_CQE_VERSION) = 0;
    *(void **)(ctx + CTX_CQ_UAR_REG) = cq_uar;
    /* a CQ for the QP's send_cq (mlx5_wq_overflow locks it when the ring looks full) */
    cq = calloc(1, sizeof *cq);
    cq->verbs_cq.cq.context = ibctx;
}

static struct o_qp *make_qp(unsigned wqe_cnt, unsigned max_post, int max_gs, int max_inline, uint32_t qpn,
                            unsigned rq_cnt) {
    struct o_qp *q = calloc(1, sizeof *q);
    q->rsc.type = 0; /* MLX5_RSC_TYPE_QP */
    q->rsc.rsn = qpn;
    q->ibv_qp = &q->verbs_qp.qp;
    q->verbs_qp.qp.context = ibctx;
    q->verbs_qp.qp.qp_num = qpn;
    q->verbs_qp.qp.qp_type = IBV_QPT_RC;
    q->verbs_qp.qp.state = IBV_QPS_RTS;
    q->verbs_qp.qp.send_cq = &cq->verbs_cq.cq;
    q->verbs_qp.qp.recv_cq = &cq->verbs_cq.cq;
    q->max_inline_data = max_inline;
    q->atomics_enabled = 1;
    q->sq.wqe_cnt = wqe_cnt;
    q->sq.max_post = max_post;
    q->sq.max_gs = q->sq.qp_state_max_gs = max_gs;
    q->sq.wqe_shift = 6;
    q->sq.wrid = calloc(wqe_cnt, sizeof(uint64_t));
    q->sq.wqe_head = calloc(wqe_cnt, sizeof(unsigned));
    q->sq.wr_data = calloc(wqe_cnt, sizeof(uint32_t));
    q->rq.wqe_cnt = rq_cnt;
    q->rq.max_post = rq_cnt;
    q->rq.wqe_shift = 4;
    q->rq.wrid = calloc(rq_cnt, sizeof(uint64_t));
    q->db = dbrec;
    q->bf = &bf;
    table_put(qpn, q);
    return q;
}

static void cmd_q(char *args) {
    unsigned wqe_cnt, max_post, sig, bf_size, uuarn, cur;
    int max_gs, max_inline, prefer, shut_up;
    uint32_t qpn;
    if (sscanf(args, "%i %i %i %i %i %i %i %i %i %i %i", &wqe_cnt, &max_post, &max_gs, &max_inline, &qpn, &sig,
               &bf_size, &uuarn, &prefer, &shut_up, &cur) != 11) { fprintf(stderr, "bad Q\n"); exit(2); }
    if (!ctx) new_ctx();
    *(int *)(ctx + CTX_PREFER_BF) = prefer;
    *(int *)(ctx + CTX_SHUT_UP_BF) = shut_up;
    qp = make_qp(wqe_cnt, max_post, max_gs, max_inline, qpn, 16);
    qp->sq_signal_bits = (uint8_t)sig;
    ring_bytes = (size_t)wqe_cnt << 6;
    free(ring);
    ring = aligned_alloc(64, ring_bytes);
    memset(ring, 0xEE, ring_bytes);
    qp->sq_start = ring;
    qp->sq.qend = ring + ring_bytes;
    qp->sq.head = qp->sq.tail = qp->sq.cur_post = cur;
    memset(dbrec, 0, sizeof dbrec);
    free(bf_reg);
    bf_reg = aligned_alloc(64, 2 * (size_t)bf_size);
    memset(&bf, 0, sizeof bf);
    bf.reg = bf_reg;
    bf.buf_size = bf_size;
    bf.uuarn = uuarn;
    bf.offset = 0;
}

/* reads one "W ..." line into wr (sg lists from a static pool) */
static struct ibv_sge sge_pool[4096];
static int sge_used;
static void read_wr(struct ibv_send_wr *wr) {
    char line[4096];
    if (!fgets(line, sizeof line, stdin) || line[0] != 'W') { fprintf(stderr, "expected W\n"); exit(2); }
    unsigned long long wr_id, raddr, swap, cmp;
    unsigned opcode, flags, imm, rkey;
    int nsge, n;
    char *p = line + 1;
    if (sscanf(p, "%llu %i %i %i %llu %i %llu %llu %i%n", &wr_id, &opcode, &flags, &imm, &raddr, &rkey, &swap, &cmp,
               &nsge, &n) != 9) { fprintf(stderr, "bad W\n"); exit(2); }
    p += n;
    memset(wr, 0, sizeof *wr);
    wr->wr_id = wr_id;
    wr->opcode = opcode;
    wr->send_flags = flags;
    if (opcode == IBV_WR_SEND_WITH_INV) wr->invalidate_rkey = imm; else wr->imm_data = htobe32(imm);
    if (opcode == IBV_WR_ATOMIC_CMP_AND_SWP || opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
        wr->wr.atomic.remote_addr = raddr; wr->wr.atomic.rkey = rkey;
        wr->wr.atomic.swap = swap; wr->wr.atomic.compare_add = cmp;
    } else {
        wr->wr.rdma.remote_addr = raddr; wr->wr.rdma.rkey = rkey;
    }
    wr->sg_list = sge_pool + sge_used;
    wr->num_sge = nsge;
    for (int i = 0; i < nsge; i++) {
        unsigned long long addr; unsigned len, lkey;
        if (sscanf(p, "%llu %i %i%n", &addr, &len, &lkey, &n) != 3) { fprintf(stderr, "bad sge\n"); exit(2); }
        p += n;
        if (flags & IBV_SEND_INLINE) addr += (uintptr_t)pattern_buf;
        sge_pool[sge_used].addr = addr; sge_pool[sge_used].length = len; sge_pool[sge_used].lkey = lkey;
        sge_used++;
    }
}

static void report_post(int rc, int bad, unsigned old_post) {
    printf("R %d %d %u %u %u\n", rc, bad, qp->sq.cur_post, qp->sq.head, bf.offset);
    unsigned nbb = qp->sq.cur_post - old_post;
    printf("S %u %u ", old_post & (qp->sq.wqe_cnt - 1), nbb);
    for (unsigned i = 0; i < nbb; i++) {
        uint8_t *w = ring + (((old_post + i) & (qp->sq.wqe_cnt - 1)) << 6);
        for (int j = 0; j < 64; j++) printf("%02x", w[j]);
    }
    printf("\nH %016llx\n", (unsigned long long)fnv(ring, ring_bytes));
    hex("D", (uint8_t *)dbrec, sizeof dbrec);
    hex("B", bf_reg, 2 * (size_t)bf.buf_size);
}

static void cmd_p(int n) {
    struct ibv_send_wr wrs[256], *bad = NULL;
    sge_used = 0;
    for (int i = 0; i < n; i++) { read_wr(&wrs[i]); wrs[i].next = i + 1 < n ? &wrs[i + 1] : NULL; }
    unsigned old = qp->sq.cur_post;
    memset(bf_reg, 0, 2 * (size_t)bf.buf_size);
    int rc = RC(mlx5_post_send)(qp->ibv_qp, &wrs[0], &bad);
    report_post(rc, bad ? (int)(bad - wrs) : -1, old);
}

/* ibv_wr_start on a zeroed BlueFlame register; returns cur_post before the chain (for report_post) */
static unsigned start_chain(struct ibv_qp_ex *x) {
    unsigned old = qp->sq.cur_post;
    memset(bf_reg, 0, 2 * (size_t)bf.buf_size);
    ibv_wr_start(x);
    return old;
}

/* w's wr_id, flags and operation through the ibv_wr_<op> builder (SEND with invalidate only when with_inv: a DCI
 * has none) */
static void wr_op(struct ibv_qp_ex *x, struct ibv_send_wr *w, int with_inv, char cmd) {
    x->wr_id = w->wr_id;
    x->wr_flags = w->send_flags;
    switch (w->opcode) {
    case IBV_WR_RDMA_WRITE: ibv_wr_rdma_write(x, w->wr.rdma.rkey, w->wr.rdma.remote_addr); break;
    case IBV_WR_RDMA_WRITE_WITH_IMM:
        ibv_wr_rdma_write_imm(x, w->wr.rdma.rkey, w->wr.rdma.remote_addr, w->imm_data); break;
    case IBV_WR_RDMA_READ: ibv_wr_rdma_read(x, w->wr.rdma.rkey, w->wr.rdma.remote_addr); break;
    case IBV_WR_SEND: ibv_wr_send(x); break;
    case IBV_WR_SEND_WITH_IMM: ibv_wr_send_imm(x, w->imm_data); break;
    case IBV_WR_SEND_WITH_INV:
        if (!with_inv) { fprintf(stderr, "%c: opcode %d\n", cmd, w->opcode); exit(2); }
        ibv_wr_send_inv(x, w->invalidate_rkey); break;
    case IBV_WR_ATOMIC_CMP_AND_SWP:
        ibv_wr_atomic_cmp_swp(x, w->wr.atomic.rkey, w->wr.atomic.remote_addr, w->wr.atomic.compare_add,
                              w->wr.atomic.swap); break;
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
        ibv_wr_atomic_fetch_add(x, w->wr.atomic.rkey, w->wr.atomic.remote_addr, w->wr.atomic.compare_add); break;
    default: fprintf(stderr, "%c: opcode %d\n", cmd, w->opcode); exit(2);
    }
}

/* w's data through ibv_wr_set_inline_data(_list) or ibv_wr_set_sge(_list) */
static void wr_data(struct ibv_qp_ex *x, struct ibv_send_wr *w) {
    if (w->send_flags & IBV_SEND_INLINE) {
        struct ibv_data_buf bufs[64];
        for (int k = 0; k < w->num_sge; k++) {
            bufs[k].addr = (void *)(uintptr_t)w->sg_list[k].addr; bufs[k].length = w->sg_list[k].length;
        }
        if (w->num_sge == 1) ibv_wr_set_inline_data(x, bufs[0].addr, bufs[0].length);
        else ibv_wr_set_inline_data_list(x, w->num_sge, bufs);
    } else if (w->num_sge == 1) {
        ibv_wr_set_sge(x, w->sg_list[0].lkey, w->sg_list[0].addr, w->sg_list[0].length);
    } else {
        ibv_wr_set_sge_list(x, w->num_sge, w->sg_list);
    }
}

/* the same chain through the ibv_qp_ex builders (ibv_wr_*) */
static void cmd_x(int n) {
    struct ibv_send_wr wrs[256];
    sge_used = 0;
    for (int i = 0; i < n; i++) read_wr(&wrs[i]);
    struct ibv_qp_init_attr_ex attr = { .qp_type = IBV_QPT_RC, .comp_mask = IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
        .send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND
            | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP
            | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_SEND_WITH_INV };
    int frc = RC(mlx5_qp_fill_wr_pfns)(qp, &attr, NULL);
    if (frc) { fprintf(stderr, "mlx5_qp_fill_wr_pfns: %d\n", frc); exit(2); }
    struct ibv_qp_ex *x = &qp->verbs_qp.qp_ex;
    unsigned old = start_chain(x);
    for (int i = 0; i < n; i++) {
        wr_op(x, &wrs[i], 1, 'X');
        wr_data(x, &wrs[i]);
    }
    int rc = ibv_wr_complete(x);
    report_post(rc, -1, old);
}

static int unhex(char c);
/* ---- DC initiators: libmlx5's builders with mlx5_send_wr_set_dc_addr (the datagram segment of struct mlx5_ah) ---- */
static struct o_ah dc_ahs[16];

static void cmd_j(char *args) {
    unsigned i; char h[200];
    if (sscanf(args, "%i %199s", &i, h) != 2 || i >= 16 || strlen(h) != 96) { fprintf(stderr, "bad J\n"); exit(2); }
    uint8_t *av = (uint8_t *)&dc_ahs[i].av;
    for (int k = 0; k < 48; k++) av[k] = (uint8_t)(unhex(h[2 * k]) << 4 | unhex(h[2 * k + 1]));
}

static void cmd_y(int n) {
    struct ibv_send_wr wrs[256];
    unsigned ah[256], dctn[256];
    int stream[256];
    unsigned long long key[256];
    sge_used = 0;
    for (int i = 0; i < n; i++) {
        char line[256];
        read_wr(&wrs[i]);
        stream[i] = -1;
        int got = fgets(line, sizeof line, stdin) ? sscanf(line, "M %i %i %llu %i", &ah[i], &dctn[i], &key[i],
                                                           &stream[i]) : 0;
        if (got < 3 || ah[i] >= 16 || stream[i] > 0xffff) { fprintf(stderr, "bad M\n"); exit(2); }
    }
    struct ibv_qp_init_attr_ex attr = { .qp_type = IBV_QPT_DRIVER, .comp_mask = IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
        .send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND
            | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP
            | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD };
    struct mlx5dv_qp_init_attr dv = { .comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC,
        .dc_init_attr = { .dc_type = MLX5DV_DCTYPE_DCI } };
    int frc = RC(mlx5_qp_fill_wr_pfns)(qp, &attr, &dv);
    if (frc) { fprintf(stderr, "mlx5_qp_fill_wr_pfns (DCI): %d\n", frc); exit(2); }
    struct ibv_qp_ex *x = &qp->verbs_qp.qp_ex;
    struct mlx5dv_qp_ex *mx = &qp->dv_qp; /* mlx5dv_qp_ex_from_ibv_qp_ex */
    unsigned old = start_chain(x);
    for (int i = 0; i < n; i++) {
        wr_op(x, &wrs[i], 0, 'Y');
        if (stream[i] < 0)
            mlx5dv_wr_set_dc_addr(mx, &dc_ahs[ah[i]].ibv_ah, dctn[i], key[i]);
        else
            mlx5dv_wr_set_dc_addr_stream(mx, &dc_ahs[ah[i]].ibv_ah, dctn[i], key[i], (uint16_t)stream[i]);
        wr_data(x, &wrs[i]);
    }
    int rc = ibv_wr_complete(x);
    report_post(rc, -1, old);
}

static uint8_t *rq_buf;
static size_t rq_bytes;

static void cmd_u(char *args) {
    unsigned cnt, stride, max_post, head;
    if (sscanf(args, "%i %i %i %i", &cnt, &stride, &max_post, &head) != 4) { fprintf(stderr, "bad U\n"); exit(2); }
    rq_bytes = (size_t)cnt * stride;
    free(rq_buf);
    rq_buf = aligned_alloc(64, rq_bytes);
    memset(rq_buf, 0xEE, rq_bytes);
    free(qp->rq.wrid);
    qp->rq.wrid = calloc(cnt, sizeof(uint64_t));
    qp->buf.buf = rq_buf;
    qp->rq.offset = 0;
    qp->rq.wqe_cnt = cnt;
    qp->rq.max_post = max_post;
    qp->rq.max_gs = qp->rq.qp_state_max_gs = (int)(stride / 16);
    qp->rq.wqe_shift = __builtin_ctz(stride);
    qp->rq.head = qp->rq.tail = head;
}

static void cmd_g(int n) {
    struct ibv_send_wr swr[256];
    struct ibv_recv_wr wrs[256], *bad = NULL;
    sge_used = 0;
    for (int i = 0; i < n; i++) {
        read_wr(&swr[i]);
        wrs[i].wr_id = swr[i].wr_id; wrs[i].sg_list = swr[i].sg_list; wrs[i].num_sge = swr[i].num_sge;
        wrs[i].next = i + 1 < n ? &wrs[i + 1] : NULL;
    }
    unsigned old = qp->rq.head;
    int rc = RC(mlx5_post_recv)(qp->ibv_qp, &wrs[0], &bad);
    printf("R %d %d %u\n", rc, bad ? (int)(bad - wrs) : -1, qp->rq.head);
    unsigned cnt = qp->rq.head - old, stride = 1u << qp->rq.wqe_shift;
    printf("S %u %u ", old & (qp->rq.wqe_cnt - 1), cnt);
    for (unsigned i = 0; i < cnt; i++) {
        uint8_t *w = rq_buf + (size_t)((old + i) & (qp->rq.wqe_cnt - 1)) * stride;
        for (unsigned j = 0; j < stride; j++) printf("%02x", w[j]);
    }
    printf("\nH %016llx\n", (unsigned long long)fnv(rq_buf, rq_bytes));
    hex("D", (uint8_t *)dbrec, sizeof dbrec);
}

static void cmd_c(char *args) {
    unsigned ncqe, sq_cnt, rq_cnt, uidx = 0; uint32_t qpn;
    if (sscanf(args, "%i %i %i %i %i", &ncqe, &qpn, &sq_cnt, &rq_cnt, &uidx) < 4) { fprintf(stderr, "bad C\n"); exit(2); }
    if (!ctx) new_ctx();
    cq_qp = make_qp(sq_cnt, sq_cnt, 4, 0, qpn, rq_cnt);
    cq_v1 = uidx != 0;
    *(int *)(ctx + CTX_CQE_VERSION) = cq_v1;
    if (cq_v1) { /* CQE version 1: completions name the QP by its user index (rsc.rsn) */
        cq_qp->rsc.rsn = uidx;
        uidx_put(uidx, cq_qp);
    }
    for (unsigned i = 0; i < sq_cnt; i++) { cq_qp->sq.wrid[i] = 0x5100000000ULL + i; cq_qp->sq.wqe_head[i] = i; }
    for (unsigned i = 0; i < rq_cnt; i++) cq_qp->rq.wrid[i] = 0x5200000000ULL + i;
    free(cq_buf);
    cq_buf = aligned_alloc(64, (size_t)ncqe * 64);
    memset(cq_buf, 0, (size_t)ncqe * 64);
    for (unsigned i = 0; i < ncqe; i++) cq_buf[i * 64 + 63] = 0xF0 | 1; /* MLX5_CQE_INVALID, owner 1 (HW) */
    memset(cq, 0, sizeof *cq);
    cq->verbs_cq.cq.context = ibctx;
    cq->verbs_cq.cq.cqe = ncqe - 1;
    cq->buf_a.buf = cq_buf;
    cq->active_buf = &cq->buf_a;
    cq->cqe_sz = 64;
    cq->cqn = 0x77;
    cq->dbrec = cq_dbrec;
    memset(cq_dbrec, 0, sizeof cq_dbrec);
    memset(cq_uar, 0, sizeof cq_uar);
}

static int unhex(char c) { return c <= '9' ? c - '0' : (c | 32) - 'a' + 10; }

static void cmd_e(char *args) {
    unsigned slot; char h[200];
    if (sscanf(args, "%i %199s", &slot, h) != 2 || strlen(h) != 128) { fprintf(stderr, "bad E\n"); exit(2); }
    uint8_t *c = cq_buf + ((size_t)slot << 6);
    for (int i = 0; i < 64; i++) c[i] = (uint8_t)(unhex(h[2 * i]) << 4 | unhex(h[2 * i + 1]));
}

static void cmd_l(int n) {
    struct ibv_wc wc[64];
    memset(wc, 0xCC, sizeof wc);
    int rc = (cq_v1 ? RC(mlx5_poll_cq_v1) : RC(mlx5_poll_cq))(&cq->verbs_cq.cq, n, wc);
    printf("N %d %u %08x\n", rc, cq->cons_index, be32toh(cq_dbrec[0]));
    for (int i = 0; i < rc; i++) {
        struct ibv_wc *w = &wc[i];
        printf("WC %llu %u %u %u %u %u %u %u %u %u %u %u %u\n", (unsigned long long)w->wr_id, w->status, w->opcode,
               w->vendor_err, w->byte_len, w->imm_data, w->qp_num, w->src_qp, w->wc_flags, w->pkey_index, w->slid,
               w->sl, w->dlid_path_bits);
    }
}

int main(void) {
    char line[1 << 16];
    pattern();
    setvbuf(stdout, NULL, _IOFBF, 1 << 20);
    while (fgets(line, sizeof line, stdin)) {
        char *a = line + 1;
        switch (line[0]) {
        case 'Q': cmd_q(a); break;
        case 'T': qp->sq.tail = (unsigned)strtoul(a, NULL, 0); break;
        case 'P': cmd_p(atoi(a)); break;
        case 'X': cmd_x(atoi(a)); break;
        case 'C': cmd_c(a); break;
        case 'U': cmd_u(a); break;
        case 'K': qp->rq.tail = (unsigned)strtoul(a, NULL, 0); break;
        case 'G': cmd_g(atoi(a)); break;
        case 'E': cmd_e(a); break;
        case 'L': cmd_l(atoi(a)); break;
        case 'A': {
            RC(mlx5_arm_cq)(&cq->verbs_cq.cq, atoi(a));
            printf("Y %08x ", be32toh(cq_dbrec[1]));
            hex("", cq_uar + 0x20, 8);
            break;
        }
        case 'V': for (int i = atoi(a); i > 0; i--) RC(mlx5_cq_event)(&cq->verbs_cq.cq); break;
        case 'Z': qp->verbs_qp.qp.qp_type = IBV_QPT_DRIVER; qp->dc_type = MLX5DV_DCTYPE_DCI; break;
        case 'J': cmd_j(a); break;
        case 'Y': cmd_y(atoi(a)); break;
        case '#': case '\n': break;
        default: fprintf(stderr, "oracle: unknown command %c\n", line[0]); return 2;
        }
    }
    fflush(stdout);
    return 0;
}
