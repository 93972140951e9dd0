/*
 * A fake verbs provider for the host benchmarks (no RDMA device there): functions with the signatures of the
 * provider slots panverbs calls on the data path (ibv_context.ops.post_send/poll_cq, ibv_qp_ex.wr_*,
 * ibv_cq_ex.start_poll/...), doing the least a provider must: return success, and for poll_cq write N
 * completions. Built by perf/run with gcc into target/; never committed as a binary.
 */
#include <stdint.h>
#include <string.h>
#include <infiniband/verbs.h>

int fake_post(void *qp, void *wr, void **bad_wr) { (void) qp; (void) wr; (void) bad_wr; return 0; }

int fake_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc) {
    (void) cq;
    for (int i = 0; i < n; i++) {
        wc[i].wr_id = (uint64_t) i;
        wc[i].status = IBV_WC_SUCCESS;
        wc[i].opcode = IBV_WC_RDMA_WRITE;
        wc[i].qp_num = 0x11;
        wc[i].byte_len = 64;
    }
    return n;
}

void fake_void(void *p) { (void) p; }
void fake_void_i(void *p, uint32_t a) { (void) p; (void) a; }
void fake_void_ij(void *p, uint32_t a, uint64_t b) { (void) p; (void) a; (void) b; }
void fake_void_iji(void *p, uint32_t a, uint64_t b, uint32_t c) { (void) p; (void) a; (void) b; (void) c; }
int fake_int(void *p) { (void) p; return 0; }
int fake_start_poll(struct ibv_cq_ex *cq, void *attr) { (void) attr; cq->status = IBV_WC_SUCCESS; cq->wr_id = 7; return 0; }
int fake_next_poll(struct ibv_cq_ex *cq) { cq->wr_id++; return 0; }
uint32_t fake_read_u32(void *p) { (void) p; return 64; }
