/*
 * A fake verbs provider for the host benchmarks (the host has no RDMA device). It builds the objects panverbs'
 * data path reads -- an ibv_context whose ops slots point here, ibv_cq/ibv_cq_ex, ibv_qp/ibv_qp_ex, ibv_mr -- with
 * the real <infiniband/verbs.h> layouts, and implements the data-path slots the way a user-space provider does,
 * minus the hardware: post_send and the ibv_wr_* builders write a WQE per WR into a send ring (the fields mlx5
 * writes), signaled WRs produce a completion in the send CQ's ring, poll_cq and the ibv_cq_ex polling functions
 * consume that ring. So a benchmark that posts and polls through the real QueuePair and CompletionQueue objects
 * runs a closed loop, as on a device.
 *
 * The fake_c_* functions are the C baselines: the same work as a Java benchmark, done in C through the same
 * function pointers (one downcall from Java per operation).
 *
 * For core's host tests (FakeProvider) it also has a receive queue per QP (a SEND, SEND_WITH_IMM or
 * RDMA_WRITE_WITH_IMM consumes one of the QP's own receives: a loopback onto itself, or fails RNR), injected errors
 * and flushes whose CQE opcode is deliberately misleading (it is undefined on error), and a hook that runs inside
 * every post, so a test can act "while the provider is in the call".
 *
 * Built by core's tests and by perf/run with gcc into target/; never committed as a binary.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#define RING 4096 /* power of two, larger than any queue the benchmarks use */

struct fake_cqe {
    uint64_t wr_id;
    uint32_t status, opcode, byte_len, qp_num;
};

struct fake_cq {
    struct ibv_cq_ex ex; /* starts with the ibv_cq fields: one object serves both CQ APIs */
    uint32_t head, tail;
    struct fake_cqe *cur; /* the completion an extended poll is on */
    struct fake_cqe ring[RING];
};

struct fake_wqe { /* what a provider copies out of an ibv_send_wr (cf. mlx5's ctrl + raddr + data segments) */
    uint64_t wr_id, remote_addr, addr;
    uint32_t opcode, flags, rkey, lkey, length, imm;
};

struct fake_qp {
    struct ibv_qp_ex ex; /* starts with the ibv_qp */
    struct fake_cq *scq, *rcq;
    int sq_sig_all;
    uint32_t sq_head, batch_start;
    uint32_t fail_status; /* the next executed send WR completes with this status (0: none) */
    uint32_t rq_head, rq_tail;
    uint64_t rq[RING]; /* posted receives: their wr_id */
    struct fake_wqe sq[RING];
    uint32_t last_xrc_srqn; /* from wr_set_xrc_srqn (host tests of XRC initiators); last, to leave the rings be */
};

static void (*post_hook)(void);

/* runs inside every post_send, post_recv and wr_complete, before the WRs are executed */
void fake_set_post_hook(void (*fn)(void)) { post_hook = fn; }

static void run_hook(void) {
    if (post_hook)
        post_hook();
}

/* runs inside wr_set_ud_addr and wr_set_dc_addr, where libmlx5 copies the AH's address vector */
static void (*ah_hook)(void);
void fake_set_ah_hook(void (*fn)(void)) { ah_hook = fn; }

static void push(struct fake_cq *cq, uint64_t wr_id, uint32_t status, uint32_t opcode, uint32_t len, uint32_t qpn) {
    if (cq->tail - cq->head == RING)
        return; /* overrun: dropped */
    struct fake_cqe *e = &cq->ring[cq->tail & (RING - 1)];
    e->wr_id = wr_id;
    e->status = status;
    e->opcode = opcode;
    e->byte_len = len;
    e->qp_num = qpn;
    cq->tail++;
}

static uint32_t wc_opcode(uint32_t wr_opcode) {
    switch (wr_opcode) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM: return IBV_WC_RDMA_WRITE;
    case IBV_WR_RDMA_READ: return IBV_WC_RDMA_READ;
    case IBV_WR_ATOMIC_CMP_AND_SWP: return IBV_WC_COMP_SWAP;
    case IBV_WR_ATOMIC_FETCH_AND_ADD: return IBV_WC_FETCH_ADD;
    case IBV_WR_DRIVER1: return IBV_WC_DRIVER1; /* an mlx5 UMR (fake_mlx5dv.c) */
    default: return IBV_WC_SEND;
    }
}

/* a send WQE executed: a SEND-like opcode consumes one of the QP's own receives (or fails RNR); signaled WRs (or all
 * with sq_sig_all) and every failed one produce a CQE. An error CQE's opcode is undefined: it says RECV here. */
static void complete(struct fake_qp *qp, const struct fake_wqe *w) {
    uint32_t qpn = qp->ex.qp_base.qp_num;
    uint32_t status = IBV_WC_SUCCESS;
    if (qp->fail_status) {
        status = qp->fail_status;
        qp->fail_status = 0;
    } else if (w->opcode == IBV_WR_SEND || w->opcode == IBV_WR_SEND_WITH_IMM
               || w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
        if (qp->rq_head == qp->rq_tail) {
            status = IBV_WC_RNR_RETRY_EXC_ERR;
        } else {
            uint64_t r = qp->rq[qp->rq_head++ & (RING - 1)];
            push(qp->rcq, r, IBV_WC_SUCCESS, w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM ? IBV_WC_RECV_RDMA_WITH_IMM
                 : IBV_WC_RECV, w->length, qpn);
        }
    }
    if (status == IBV_WC_SUCCESS && !(w->flags & IBV_SEND_SIGNALED) && !qp->sq_sig_all)
        return;
    push(qp->scq, w->wr_id, status, status == IBV_WC_SUCCESS ? wc_opcode(w->opcode) : IBV_WC_RECV, w->length, qpn);
}

/* the next send WR this QP executes fails with status */
void fake_fail_next(struct ibv_qp *qp, uint32_t status) { ((struct fake_qp *) qp)->fail_status = status; }

/* the QP went to ERR: every posted receive completes with WR_FLUSH_ERR (opcode deliberately SEND: undefined) */
void fake_flush_recv(struct ibv_qp *ibqp) {
    struct fake_qp *qp = (struct fake_qp *) ibqp;
    for (; qp->rq_head != qp->rq_tail; qp->rq_head++)
        push(qp->rcq, qp->rq[qp->rq_head & (RING - 1)], IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND, 0, ibqp->qp_num);
}

int fake_dereg_mr(struct ibv_mr *mr) {
    free(mr);
    return 0;
}

int fake_destroy_qp(struct ibv_qp *qp) {
    free(qp);
    return 0;
}

/* ---- ibv_context.ops ---- */

/* ---- memory windows: a deallocated window is kept, marked dead, so that a later use of it is seen ---- */

#define MW_DEAD_HANDLE 0xDEADu
#define MW_DEAD_RKEY 0xDEADDEADu
#define MW_GRAVES 65536
static struct ibv_mw *mw_graves[MW_GRAVES];
static volatile uint32_t mw_grave_count;
static volatile uint32_t mw_dead_reads;

/* a provider reads the ibv_mw over its call (rxe: its rkey into the WQE): counts a read of a deallocated one */
static void read_mw(struct ibv_mw *mw) {
    for (int i = 0; i < 64; i++) {
        if (((volatile struct ibv_mw *) mw)->handle == MW_DEAD_HANDLE) {
            __atomic_add_fetch(&mw_dead_reads, 1, __ATOMIC_SEQ_CST);
            return;
        }
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
}

/* ibv_dealloc_mw: the window is marked dead and kept (a test-only leak), not freed */
static int fake_dealloc_mw(struct ibv_mw *mw) {
    ((volatile struct ibv_mw *) mw)->handle = MW_DEAD_HANDLE;
    ((volatile struct ibv_mw *) mw)->rkey = MW_DEAD_RKEY;
    uint32_t n = __atomic_fetch_add(&mw_grave_count, 1, __ATOMIC_SEQ_CST);
    if (n < MW_GRAVES)
        mw_graves[n] = mw;
    else
        free(mw);
    return 0;
}

/* how many times a provider call read a deallocated window, plus how many deallocated windows were written since */
uint32_t fake_mw_dead_uses(void) {
    uint32_t n = mw_grave_count < MW_GRAVES ? mw_grave_count : MW_GRAVES, written = 0;
    for (uint32_t i = 0; i < n; i++)
        if (mw_graves[i] && ((volatile struct ibv_mw *) mw_graves[i])->rkey != MW_DEAD_RKEY)
            written++;
    return mw_dead_reads + written;
}

static int fake_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr) {
    struct fake_qp *qp = (struct fake_qp *) ibqp;
    run_hook();
    for (; wr; wr = wr->next) {
        if (wr->num_sge > 1 && !(wr->send_flags & IBV_SEND_INLINE)) {
            *bad_wr = wr; /* the fake SQ has room for one SGE per WQE */
            return EINVAL;
        }
        if (wr->opcode == IBV_WR_BIND_MW)
            read_mw(wr->bind_mw.mw);
        struct fake_wqe *w = &qp->sq[qp->sq_head++ & (RING - 1)];
        w->wr_id = wr->wr_id;
        w->opcode = wr->opcode;
        w->flags = wr->send_flags;
        /* like a real provider, read imm_data/invalidate_rkey only for the opcodes that carry it: the C baseline
         * (and the library) leave it unwritten otherwise */
        w->imm = wr->opcode == IBV_WR_SEND_WITH_IMM || wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM
                 || wr->opcode == IBV_WR_SEND_WITH_INV ? wr->imm_data : 0;
        w->remote_addr = wr->wr.rdma.remote_addr;
        w->rkey = wr->wr.rdma.rkey;
        w->addr = wr->num_sge ? wr->sg_list[0].addr : 0;
        w->length = wr->num_sge ? wr->sg_list[0].length : 0;
        w->lkey = wr->num_sge ? wr->sg_list[0].lkey : 0;
        complete(qp, w); /* the "hardware" executes it at once */
    }
    return 0;
}

static int fake_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr) {
    struct fake_qp *qp = (struct fake_qp *) ibqp;
    run_hook();
    for (; wr; wr = wr->next) {
        if (qp->rq_tail - qp->rq_head == RING) {
            *bad_wr = wr;
            return ENOMEM;
        }
        qp->rq[qp->rq_tail++ & (RING - 1)] = wr->wr_id;
    }
    return 0;
}

static int fake_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr) {
    (void) srq; (void) wr; (void) bad_wr;
    return 0;
}

static int fake_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc) {
    struct fake_cq *cq = (struct fake_cq *) ibcq;
    int i = 0;
    for (; i < n && cq->head != cq->tail; i++, cq->head++) {
        const struct fake_cqe *e = &cq->ring[cq->head & (RING - 1)];
        memset(&wc[i], 0, sizeof(wc[i]));
        wc[i].wr_id = e->wr_id;
        wc[i].status = e->status;
        wc[i].opcode = e->opcode;
        wc[i].byte_len = e->byte_len;
        wc[i].qp_num = e->qp_num;
    }
    return i;
}

static int fake_req_notify_cq(struct ibv_cq *cq, int solicited_only) {
    (void) cq; (void) solicited_only;
    return 0;
}

/* ---- ibv_cq_ex ---- */

static int load(struct fake_cq *cq) {
    if (cq->head == cq->tail)
        return ENOENT;
    cq->cur = &cq->ring[cq->head++ & (RING - 1)];
    cq->ex.wr_id = cq->cur->wr_id;
    cq->ex.status = cq->cur->status;
    return 0;
}

static int fake_start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr) {
    (void) attr;
    return load((struct fake_cq *) cq);
}

static int fake_next_poll(struct ibv_cq_ex *cq) { return load((struct fake_cq *) cq); }
static void fake_end_poll(struct ibv_cq_ex *cq) { ((struct fake_cq *) cq)->cur = NULL; }
static enum ibv_wc_opcode fake_read_opcode(struct ibv_cq_ex *cq) { return ((struct fake_cq *) cq)->cur->opcode; }
static uint32_t fake_read_byte_len(struct ibv_cq_ex *cq) { return ((struct fake_cq *) cq)->cur->byte_len; }
static uint32_t fake_read_qp_num(struct ibv_cq_ex *cq) { return ((struct fake_cq *) cq)->cur->qp_num; }
static uint32_t fake_read_zero(struct ibv_cq_ex *cq) { (void) cq; return 0; }
static __be32 fake_read_imm_data(struct ibv_cq_ex *cq) { (void) cq; return 0; }
static unsigned int fake_read_wc_flags(struct ibv_cq_ex *cq) { (void) cq; return 0; }

/* ---- ibv_qp_ex builders: a WQE per operation, setters fill the last one, complete publishes the batch ---- */

static struct fake_wqe *build(struct ibv_qp_ex *ibqp, uint32_t opcode) {
    struct fake_qp *qp = (struct fake_qp *) ibqp;
    struct fake_wqe *w = &qp->sq[qp->sq_head++ & (RING - 1)];
    w->wr_id = ibqp->wr_id;
    w->flags = ibqp->wr_flags;
    w->opcode = opcode;
    w->length = 0;
    return w;
}

static struct fake_wqe *last(struct ibv_qp_ex *ibqp) {
    struct fake_qp *qp = (struct fake_qp *) ibqp;
    return &qp->sq[(qp->sq_head - 1) & (RING - 1)];
}

static void fake_wr_start(struct ibv_qp_ex *ibqp) {
    struct fake_qp *qp = (struct fake_qp *) ibqp;
    qp->batch_start = qp->sq_head;
}

static int fake_wr_complete(struct ibv_qp_ex *ibqp) {
    struct fake_qp *qp = (struct fake_qp *) ibqp;
    run_hook();
    for (uint32_t i = qp->batch_start; i != qp->sq_head; i++)
        complete(qp, &qp->sq[i & (RING - 1)]);
    return 0;
}

static void fake_wr_abort(struct ibv_qp_ex *ibqp) {
    struct fake_qp *qp = (struct fake_qp *) ibqp;
    qp->sq_head = qp->batch_start;
}

static void fake_wr_rdma_write(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr) {
    struct fake_wqe *w = build(qp, IBV_WR_RDMA_WRITE);
    w->rkey = rkey;
    w->remote_addr = remote_addr;
}

static void fake_wr_rdma_read(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr) {
    struct fake_wqe *w = build(qp, IBV_WR_RDMA_READ);
    w->rkey = rkey;
    w->remote_addr = remote_addr;
}

static void fake_wr_send(struct ibv_qp_ex *qp) { build(qp, IBV_WR_SEND); }

static void fake_wr_send_imm(struct ibv_qp_ex *qp, __be32 imm) { build(qp, IBV_WR_SEND_WITH_IMM)->imm = imm; }

static void fake_wr_set_sge(struct ibv_qp_ex *qp, uint32_t lkey, uint64_t addr, uint32_t length) {
    struct fake_wqe *w = last(qp);
    w->lkey = lkey;
    w->addr = addr;
    w->length = length;
}

/* the fake's WQE has one SGE: the list's first, with the list's total length */
static void fake_wr_set_sge_list(struct ibv_qp_ex *qp, size_t num_sge, const struct ibv_sge *sg_list) {
    struct fake_wqe *w = last(qp);
    w->lkey = num_sge ? sg_list[0].lkey : 0;
    w->addr = num_sge ? sg_list[0].addr : 0;
    w->length = 0;
    for (size_t i = 0; i < num_sge; i++) {
        w->length += sg_list[i].length;
    }
}

static void fake_wr_set_xrc_srqn(struct ibv_qp_ex *qp, uint32_t remote_srqn) {
    ((struct fake_qp *) qp)->last_xrc_srqn = remote_srqn;
}

static void fake_wr_bind_mw(struct ibv_qp_ex *qp, struct ibv_mw *mw, uint32_t rkey,
                            const struct ibv_mw_bind_info *info) {
    (void) info;
    read_mw(mw);
    build(qp, IBV_WR_BIND_MW)->rkey = rkey;
}

static void fake_wr_local_inv(struct ibv_qp_ex *qp, uint32_t rkey) { build(qp, IBV_WR_LOCAL_INV)->imm = rkey; }

static void fake_wr_set_ud_addr(struct ibv_qp_ex *qp, struct ibv_ah *ah, uint32_t remote_qpn, uint32_t remote_qkey) {
    (void) qp; (void) ah; (void) remote_qpn; (void) remote_qkey; /* executed like an RC send */
    if (ah_hook)
        ah_hook();
}

/* the remote SRQ number last set through ibv_wr_set_xrc_srqn */
uint32_t fake_last_xrc_srqn(struct ibv_qp *ibqp) { return ((struct fake_qp *) ibqp)->last_xrc_srqn; }

static void fake_wr_set_inline_data(struct ibv_qp_ex *qp, void *addr, size_t length) {
    struct fake_wqe *w = last(qp);
    w->addr = (uint64_t) (uintptr_t) addr;
    w->length = (uint32_t) length;
}

/* ---- object factory (what ibv_open_device / ibv_create_* would return) ---- */


/* ibv_bind_mw (type 1): a BIND_MW WQE, executed at once; the window gets the next rkey (as providers do) */
static int fake_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw, struct ibv_mw_bind *bind) {
    struct fake_qp *qp = (struct fake_qp *) ibqp;
    struct fake_wqe *w = &qp->sq[qp->sq_head++ & (RING - 1)];
    memset(w, 0, sizeof(*w));
    w->wr_id = bind->wr_id;
    w->opcode = IBV_WR_BIND_MW;
    w->flags = bind->send_flags;
    read_mw(mw);
    mw->rkey = ibv_inc_rkey(mw->rkey);
    w->rkey = mw->rkey;
    complete(qp, w);
    return 0;
}

/* a memory window of the fake context (ibv_dealloc_mw reaches fake_dealloc_mw through the context's ops) */
struct ibv_mw *fake_alloc_mw(struct ibv_pd *pd, int type, uint32_t rkey) {
    struct ibv_mw *mw = calloc(1, sizeof(*mw));
    mw->context = pd->context;
    mw->pd = pd;
    mw->rkey = rkey;
    mw->type = (enum ibv_mw_type) type;
    return mw;
}

struct ibv_context *fake_open_device(void) {
    struct ibv_context *ctx = calloc(1, sizeof(*ctx));
    ctx->ops.post_send = fake_post_send;
    ctx->ops.dealloc_mw = fake_dealloc_mw;
    ctx->ops.bind_mw = fake_bind_mw;
    ctx->ops.post_recv = fake_post_recv;
    ctx->ops.post_srq_recv = fake_post_srq_recv;
    ctx->ops.poll_cq = fake_poll_cq;
    ctx->ops.req_notify_cq = fake_req_notify_cq;
    ctx->num_comp_vectors = 1;
    ctx->async_fd = -1;
    ctx->cmd_fd = -1;
    return ctx;
}

struct ibv_pd *fake_alloc_pd(struct ibv_context *ctx) {
    struct ibv_pd *pd = calloc(1, sizeof(*pd));
    pd->context = ctx;
    return pd;
}

struct ibv_mr *fake_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint32_t key) {
    struct ibv_mr *mr = calloc(1, sizeof(*mr));
    mr->context = pd->context;
    mr->pd = pd;
    mr->addr = addr;
    mr->length = length;
    mr->lkey = key;
    mr->rkey = key;
    return mr;
}

/* an ibv_cq_ex whose ibv_cq prefix also serves ibv_poll_cq */
struct ibv_cq_ex *fake_create_cq(struct ibv_context *ctx, int cqe) {
    struct fake_cq *cq = calloc(1, sizeof(*cq));
    cq->ex.context = ctx;
    cq->ex.cqe = cqe;
    cq->ex.start_poll = fake_start_poll;
    cq->ex.next_poll = fake_next_poll;
    cq->ex.end_poll = fake_end_poll;
    cq->ex.read_opcode = fake_read_opcode;
    cq->ex.read_vendor_err = fake_read_zero;
    cq->ex.read_byte_len = fake_read_byte_len;
    cq->ex.read_imm_data = fake_read_imm_data;
    cq->ex.read_qp_num = fake_read_qp_num;
    cq->ex.read_src_qp = fake_read_zero;
    cq->ex.read_wc_flags = fake_read_wc_flags;
    return &cq->ex;
}

/* an ibv_qp_ex (its first member is the ibv_qp) reporting its sends to scq */
struct ibv_qp_ex *fake_create_qp(struct ibv_pd *pd, struct ibv_cq_ex *scq, struct ibv_cq_ex *rcq, uint32_t qp_num,
                                 int sq_sig_all) {
    struct fake_qp *qp = calloc(1, sizeof(*qp));
    struct ibv_qp *base = &qp->ex.qp_base;
    base->context = pd->context;
    base->pd = pd;
    base->send_cq = (struct ibv_cq *) scq;
    base->recv_cq = (struct ibv_cq *) rcq;
    base->qp_num = qp_num;
    base->qp_type = IBV_QPT_RC;
    base->state = IBV_QPS_RTS;
    qp->scq = (struct fake_cq *) scq;
    qp->rcq = (struct fake_cq *) rcq;
    qp->sq_sig_all = sq_sig_all;
    qp->ex.wr_rdma_write = fake_wr_rdma_write;
    qp->ex.wr_rdma_read = fake_wr_rdma_read;
    qp->ex.wr_send = fake_wr_send;
    qp->ex.wr_send_imm = fake_wr_send_imm;
    qp->ex.wr_set_sge = fake_wr_set_sge;
    qp->ex.wr_set_sge_list = fake_wr_set_sge_list;
    qp->ex.wr_set_inline_data = fake_wr_set_inline_data;
    qp->ex.wr_set_xrc_srqn = fake_wr_set_xrc_srqn;
    qp->ex.wr_set_ud_addr = fake_wr_set_ud_addr;
    qp->ex.wr_bind_mw = fake_wr_bind_mw;
    qp->ex.wr_local_inv = fake_wr_local_inv;
    qp->ex.wr_start = fake_wr_start;
    qp->ex.wr_complete = fake_wr_complete;
    qp->ex.wr_abort = fake_wr_abort;
    return &qp->ex;
}

/* ---- C baselines: the work of one Java benchmark operation, in C through the same function pointers ---- */

void fake_nop(void) {}

/* n RDMA WRITEs of 64 bytes as one ibv_post_send chain (the last signaled, or all), then poll the n_poll CQEs */
uint64_t fake_c_post_send(struct ibv_qp *qp, struct ibv_cq *cq, int n, int all_signaled, uint64_t wr_id,
                          uint64_t laddr, uint32_t lkey, uint64_t raddr, uint32_t rkey) {
    struct ibv_send_wr wrs[512];
    struct ibv_sge sges[512];
    struct ibv_send_wr *bad;
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
    if (ibv_post_send(qp, wrs, &bad))
        return UINT64_MAX;
    struct ibv_wc wc[16];
    uint64_t sum = 0;
    int want = all_signaled ? n : 1;
    while (want > 0) {
        int got = ibv_poll_cq(cq, want < 16 ? want : 16, wc);
        for (int i = 0; i < got; i++)
            sum += wc[i].wr_id + wc[i].status + wc[i].byte_len;
        want -= got;
    }
    return sum;
}

/* one RDMA WRITE through ibv_wr_start/ibv_wr_rdma_write/ibv_wr_set_sge/ibv_wr_complete, then one extended poll */
uint64_t fake_c_post_batch1(struct ibv_qp_ex *qp, struct ibv_cq_ex *cq, uint64_t wr_id, uint64_t laddr,
                            uint32_t lkey, uint64_t raddr, uint32_t rkey) {
    ibv_wr_start(qp);
    qp->wr_id = wr_id;
    qp->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_rdma_write(qp, rkey, raddr);
    ibv_wr_set_sge(qp, lkey, laddr, 64);
    if (ibv_wr_complete(qp))
        return UINT64_MAX;
    struct ibv_poll_cq_attr attr = {0};
    uint64_t sum = 0;
    if (ibv_start_poll(cq, &attr) == 0) {
        sum = cq->wr_id + cq->status;
        ibv_end_poll(cq);
    }
    return sum;
}

/* 16 signaled RDMA WRITEs in one ibv_post_send, then an extended poll pass reading wr_id, status, byte_len */
uint64_t fake_c_extended_poll16(struct ibv_qp *qp, struct ibv_cq_ex *cq, uint64_t wr_id, uint64_t laddr,
                                uint32_t lkey, uint64_t raddr, uint32_t rkey) {
    struct ibv_send_wr wrs[16];
    struct ibv_sge sges[16];
    struct ibv_send_wr *bad;
    for (int i = 0; i < 16; i++) {
        sges[i] = (struct ibv_sge) {.addr = laddr + i * 64, .length = 64, .lkey = lkey};
        wrs[i] = (struct ibv_send_wr) {.wr_id = wr_id + i, .next = i < 15 ? &wrs[i + 1] : NULL, .sg_list = &sges[i],
                                       .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED};
        wrs[i].wr.rdma.remote_addr = raddr + i * 64;
        wrs[i].wr.rdma.rkey = rkey;
    }
    if (ibv_post_send(qp, wrs, &bad))
        return UINT64_MAX;
    struct ibv_poll_cq_attr attr = {0};
    uint64_t sum = 0;
    if (ibv_start_poll(cq, &attr) == 0) {
        do {
            sum += cq->wr_id + cq->status + ibv_wc_read_byte_len(cq);
        } while (ibv_next_poll(cq) == 0);
        ibv_end_poll(cq);
    }
    return sum;
}

/* ---- mlx5dv_qp_ex.wr_set_dc_addr for the DC initiator's host tests: records its arguments ---- */
static uint64_t fake_dc_addr[4];
static uint64_t fake_dc_addr_calls;
static int64_t fake_dc_stream = -1;

void fake_wr_set_dc_addr(void *mqp, struct ibv_ah *ah, uint32_t remote_dctn, uint64_t remote_dc_key) {
    fake_dc_addr[0] = (uint64_t) (uintptr_t) mqp;
    fake_dc_addr[1] = (uint64_t) (uintptr_t) ah;
    fake_dc_addr[2] = remote_dctn;
    fake_dc_addr[3] = remote_dc_key;
    fake_dc_addr_calls++;
    fake_dc_stream = -1;
    if (ah_hook)
        ah_hook();
}

/* mlx5dv_qp_ex.wr_set_dc_addr_stream: records as fake_wr_set_dc_addr, and the stream (-1 after a plain call) */
void fake_wr_set_dc_addr_stream(void *mqp, struct ibv_ah *ah, uint32_t remote_dctn, uint64_t remote_dc_key,
                                uint16_t stream_id) {
    fake_wr_set_dc_addr(mqp, ah, remote_dctn, remote_dc_key);
    fake_dc_stream = stream_id;
}

int64_t fake_last_dc_stream(void) { return fake_dc_stream; }

/* the arguments of the last fake_wr_set_dc_addr into out[0..3]; returns the number of calls so far */
uint64_t fake_last_dc_addr(uint64_t *out) {
    for (int i = 0; i < 4; i++) {
        out[i] = fake_dc_addr[i];
    }
    return fake_dc_addr_calls;
}
