/*
 * Test-only model of a ConnectX send queue as the PRM describes it, for the host end-to-end tests of
 * dev.panverbs.core.mlx5 (Mlx5EndToEndTest): after a doorbell it consumes the WQEs between its consumer counter
 * and the doorbell record's send counter, executes RDMA WRITE (+imm), SEND (+imm, +inv), RDMA READ and the atomics
 * as copies between registered buffers of this process (lkeys/rkeys checked against model_reg, with their access
 * rights), and writes the CQEs the device would write: a requester CQE for each WQE with CQ_UPDATE set, an error
 * CQE (REQ_ERR, syndrome) for a WQE that fails, after which the QP is in error and every later WQE is flushed
 * (WR_FLUSH_ERR); receive-side CQEs of SENDs and WRITE_WITH_IMM go to the responder CQ with the receive buffers
 * posted by model_post_recv. It is written from the PRM's segment formats, not from the Java code: it parses what
 * is in the ring. UMR WQEs configure indirect mkeys (interleaved repeat blocks or KLM lists) through which RDMA WRITEs
 * scatter.
 */
#include <endian.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define MAXKEYS 64
struct key { uint32_t key; uint64_t addr, len; int access; };
static struct key keys[MAXKEYS];
static int nkeys;
static int nmkeys; /* indirect mkeys configured by UMRs (below) */
enum { LOCAL_WRITE = 1, REMOTE_WRITE = 2, REMOTE_READ = 4, REMOTE_ATOMIC = 8 };

struct cq { uint8_t *buf; uint32_t ncqe; uint32_t pi; };
static struct {
    uint8_t *sq; uint32_t wqe_cnt; uint32_t *dbrec; uint32_t qpn; uint32_t ci; int error; int fail_next;
    int light; /* benchmarks only: consume WQEs and write their CQEs without executing them (model_light) */
    struct cq scq, rcq;
    uint64_t rwr[256], raddr[256]; uint32_t rlen[256], rlkey[256]; uint32_t rhead, rtail; uint32_t rqpn;
    uint8_t *rq; uint32_t rq_cnt, rq_stride, rq_ci; uint32_t *rq_dbrec; /* the receiver's RQ ring, if any */
} m;

void model_reset(void) { memset(&m, 0, sizeof m); nkeys = 0; nmkeys = 0; }

void model_reg(uint32_t key, uint64_t addr, uint64_t len, int access) {
    keys[nkeys].key = key; keys[nkeys].addr = addr; keys[nkeys].len = len; keys[nkeys].access = access; nkeys++;
}

void model_qp(uint8_t *sq, uint32_t wqe_cnt, uint32_t *dbrec, uint32_t qpn, uint8_t *cq, uint32_t ncqe,
              uint8_t *rcq, uint32_t rncqe, uint32_t rqpn) {
    m.sq = sq; m.wqe_cnt = wqe_cnt; m.dbrec = dbrec; m.qpn = qpn;
    m.scq.buf = cq; m.scq.ncqe = ncqe; m.rcq.buf = rcq; m.rcq.ncqe = rncqe; m.rqpn = rqpn;
}

/* the receiving QP posts its receives into an RQ ring (receive WQEs as the PRM lays them out) */
void model_rq(uint8_t *rq, uint32_t cnt, uint32_t stride, uint32_t *dbrec) {
    m.rq = rq; m.rq_cnt = cnt; m.rq_stride = stride; m.rq_dbrec = dbrec; m.rq_ci = 0;
}

/* consumes the last n WQEBBs again at the next doorbell (the benchmarks' baseline of the model's own cost) */
void model_rewind(uint32_t wqebbs) { m.ci -= wqebbs; }

/*
 * Benchmarks only (on: 1): the "light" device parses each WQE's control segment, advances and writes the CQEs of
 * signaled WRs as before, but moves no data and checks no key (byte_cnt 0: undefined for successful REQ completions
 * other than READ). Its per-WR work is ~1 ns instead of ~12.6, so the posting paths' own per-WR costs are not the
 * small difference of two large, noisy slopes. model_reset turns it off.
 */
void model_light(int on) { m.light = on; }

/* the next WQE fails with this syndrome (0: none) */
void model_fail_next(int syndrome) { m.fail_next = syndrome; }

void model_post_recv(uint64_t wr_id, uint64_t addr, uint32_t len, uint32_t lkey) {
    uint32_t i = m.rhead++ & 255;
    m.rwr[i] = wr_id; m.raddr[i] = addr; m.rlen[i] = len; m.rlkey[i] = lkey;
}

static int check(uint32_t key, uint64_t addr, uint64_t len, int need) {
    for (int i = 0; i < nkeys; i++)
        if (keys[i].key == key)
            return addr >= keys[i].addr && addr + len <= keys[i].addr + keys[i].len && (keys[i].access & need) == need;
    return 0;
}

static void cqe(struct cq *cq, int opcode, uint32_t top_qpn, uint16_t wqe_counter, uint32_t byte_cnt,
                uint32_t imm_be, int syndrome) {
    uint8_t *c = cq->buf + (size_t)(cq->pi & (cq->ncqe - 1)) * 64;
    uint8_t owner = (cq->pi / cq->ncqe) & 1;
    memset(c, 0, 63);
    *(uint32_t *)(c + 36) = imm_be;
    *(uint32_t *)(c + 44) = htobe32(byte_cnt);
    *(uint32_t *)(c + 56) = htobe32(top_qpn);
    *(uint16_t *)(c + 60) = htobe16(wqe_counter);
    if (syndrome) { c[55] = (uint8_t)syndrome; c[54] = 0x42; }
    atomic_thread_fence(memory_order_release); /* the entry before its ownership */
    c[63] = (uint8_t)(opcode << 4 | owner);
    cq->pi++;
}

/* 16-byte segment n of the WQE starting at basic block idx, wrapping at the ring's end */
static uint8_t *seg(uint32_t idx, int n) {
    size_t off = ((size_t)idx * 64 + (size_t)n * 16) & ((size_t)m.wqe_cnt * 64 - 1); /* wqe_cnt: a power of 2 */
    return m.sq + off;
}

/* gathers the WQE's data segments from segment 'first' to ds into buf; returns the byte count or -1 (bad lkey) */
static long gather(uint32_t idx, int first, int ds, uint8_t *buf, size_t cap) {
    if (first >= ds) return 0; /* no data segment: an empty message */
    uint8_t *s = seg(idx, first);
    uint32_t bc = be32toh(*(uint32_t *)s);
    if (bc & 0x80000000u) { /* inline: 4-byte header, payload follows, wrapping */
        uint32_t n = bc & 0x7fffffff;
        for (uint32_t i = 0; i < n && i < cap; i++) {
            size_t off = (((size_t)idx * 64 + (size_t)first * 16 + 4 + i)) % ((size_t)m.wqe_cnt * 64);
            buf[i] = m.sq[off];
        }
        return n;
    }
    long total = 0;
    for (int n = first; n < ds; n++) {
        s = seg(idx, n);
        uint32_t len = be32toh(*(uint32_t *)s), lkey = be32toh(*(uint32_t *)(s + 4));
        uint64_t addr = be64toh(*(uint64_t *)(s + 8));
        if (!check(lkey, addr, len, 0) || total + len > cap) return -1;
        memcpy(buf + total, (void *)(uintptr_t)addr, len);
        total += len;
    }
    return total;
}

/* scatters n bytes into the WQE's data segments (READ and atomic results); -1 on a bad lkey/right */
static int scatter(uint32_t idx, int first, int ds, const uint8_t *buf, long n) {
    for (int k = first; k < ds && n > 0; k++) {
        uint8_t *s = seg(idx, k);
        uint32_t len = be32toh(*(uint32_t *)s), lkey = be32toh(*(uint32_t *)(s + 4));
        uint64_t addr = be64toh(*(uint64_t *)(s + 8));
        long c = n < len ? n : len;
        if (!check(lkey, addr, c, LOCAL_WRITE)) return -1;
        memcpy((void *)(uintptr_t)addr, buf, c);
        buf += c; n -= c;
    }
    return 0;
}

static uint8_t payload[1 << 20];

/* delivers n payload bytes into the next receive WQE of the RQ ring: 0, or a requester syndrome */
static int deliver_rq(long n, int resp_opcode, uint32_t imm_be) {
    if ((m.rq_ci & 0xffff) == (be32toh(m.rq_dbrec[0]) & 0xffff)) return 0x16; /* RNR: nothing posted */
    uint8_t *w = m.rq + (size_t)(m.rq_ci & (m.rq_cnt - 1)) * m.rq_stride;
    long left = n, off = 0;
    for (uint32_t k = 0; k < m.rq_stride / 16 && left > 0; k++) {
        uint8_t *d = w + 16 * k;
        uint32_t len = be32toh(*(uint32_t *)d), lkey = be32toh(*(uint32_t *)(d + 4));
        uint64_t addr = be64toh(*(uint64_t *)(d + 8));
        if (lkey == 0x100) break; /* MLX5_INVALID_LKEY: the terminator */
        long c = left < len ? left : len;
        if (!check(lkey, addr, c, LOCAL_WRITE)) {
            cqe(&m.rcq, 14, m.rqpn, (uint16_t)m.rq_ci, 0, 0, 0x04); m.rq_ci++; return 0x14;
        }
        memcpy((void *)(uintptr_t)addr, payload + off, c);
        off += c; left -= c;
    }
    if (left > 0) { cqe(&m.rcq, 14, m.rqpn, (uint16_t)m.rq_ci, 0, 0, 0x01); m.rq_ci++; return 0x14; }
    cqe(&m.rcq, resp_opcode, m.rqpn, (uint16_t)m.rq_ci, (uint32_t)n, imm_be, 0);
    m.rq_ci++;
    return 0;
}

/*
 * Indirect mkeys configured by UMR WQEs (PRM: UMR control segment, mkey context segment, then inline translations:
 * a repeat block -- byte_count, op 0x400, repeat_count, num_ent, then 16-byte entries of stride, byte_count, memkey,
 * va -- or 16-byte KLMs of byte_count, mkey, address). Keyed by the mkey in the control segment's imm; the mkey's
 * address space is zero-based (the start address is not in the UMR's mask).
 */
#define MAXMKEYS 16
#define MAXENT 64
struct ent { uint64_t va; uint32_t count, stride, key; };
struct mkey { uint32_t key; int access; uint64_t len; int repeat_block; uint32_t repeat, n, block; struct ent e[MAXENT]; };
static struct mkey mkeys[MAXMKEYS];

static struct mkey *find_mkey(uint32_t key) {
    for (int i = 0; i < nmkeys; i++)
        if (mkeys[i].key == key) return &mkeys[i];
    return NULL;
}

static int umr(uint32_t idx, int ds, uint32_t mkey_be) {
    uint8_t *uc = seg(idx, 1);
    if (!(uc[0] & 0x80)) return 0x02; /* only inline translations are modelled */
    uint32_t octowords = be16toh(*(uint16_t *)(uc + 4));
    uint8_t *mk = seg(idx, 4);
    uint32_t key = be32toh(mkey_be);
    struct mkey *k = find_mkey(key);
    if (!k) {
        if (nmkeys == MAXMKEYS) return 0x02;
        k = &mkeys[nmkeys++];
    }
    memset(k, 0, sizeof *k);
    k->key = key;
    uint8_t acc = mk[2];
    k->access = (acc & 0x08 ? LOCAL_WRITE : 0) | (acc & 0x20 ? REMOTE_WRITE : 0) | (acc & 0x10 ? REMOTE_READ : 0)
            | (acc & 0x40 ? REMOTE_ATOMIC : 0);
    k->len = be64toh(*(uint64_t *)(mk + 24));
    uint8_t *d = seg(idx, 8);
    if (be32toh(*(uint32_t *)(d + 4)) == 0x400) { /* repeat block */
        k->repeat_block = 1;
        k->block = be32toh(*(uint32_t *)d);
        k->repeat = be32toh(*(uint32_t *)(d + 8));
        k->n = be16toh(*(uint16_t *)(d + 14));
        if (k->n > MAXENT || 9 + (int)k->n > ds) return 0x02;
        for (uint32_t i = 0; i < k->n; i++) {
            uint8_t *e = seg(idx, 9 + (int)i);
            k->e[i].stride = be16toh(*(uint16_t *)e);
            k->e[i].count = be16toh(*(uint16_t *)(e + 2));
            k->e[i].key = be32toh(*(uint32_t *)(e + 4));
            k->e[i].va = be64toh(*(uint64_t *)(e + 8));
        }
    } else { /* KLMs: zero-length padding entries translate nothing */
        k->n = octowords;
        if (k->n > MAXENT || 8 + (int)k->n > ds) return 0x02;
        for (uint32_t i = 0; i < k->n; i++) {
            uint8_t *e = seg(idx, 8 + (int)i);
            k->e[i].count = be32toh(*(uint32_t *)e);
            k->e[i].key = be32toh(*(uint32_t *)(e + 4));
            k->e[i].va = be64toh(*(uint64_t *)(e + 8));
        }
    }
    return 0;
}

/* writes n bytes at mkey offset off through k's translation; 0, or a syndrome (remote access error) */
static int write_indirect(struct mkey *k, uint64_t off, const uint8_t *src, uint64_t n) {
    if (!(k->access & REMOTE_WRITE) || off + n > k->len || off + n < off) return 0x13;
    while (n > 0) {
        uint64_t target = 0, chunk = 0;
        uint32_t key = 0;
        if (k->repeat_block) {
            uint64_t rep = off / k->block, within = off % k->block;
            for (uint32_t i = 0; i < k->n; i++) {
                if (within < k->e[i].count) {
                    target = k->e[i].va + rep * k->e[i].stride + within;
                    chunk = k->e[i].count - within;
                    key = k->e[i].key;
                    break;
                }
                within -= k->e[i].count;
            }
        } else {
            uint64_t within = off;
            for (uint32_t i = 0; i < k->n; i++) {
                if (within < k->e[i].count) {
                    target = k->e[i].va + within;
                    chunk = k->e[i].count - within;
                    key = k->e[i].key;
                    break;
                }
                within -= k->e[i].count;
            }
        }
        if (chunk == 0) return 0x13;
        if (chunk > n) chunk = n;
        if (!check(key, target, chunk, LOCAL_WRITE)) return 0x13;
        memcpy((void *)(uintptr_t)target, src, chunk);
        src += chunk; off += chunk; n -= chunk;
    }
    return 0;
}

/* executes one WQE; returns 0 or an error syndrome */
static int execute(uint32_t idx, int op, int ds, uint32_t imm_be, uint32_t *byte_cnt) {
    uint8_t *r = seg(idx, 1);
    uint64_t raddr = be64toh(*(uint64_t *)r);
    uint32_t rkey = be32toh(*(uint32_t *)(r + 8));
    long n;
    switch (op) {
    case 0x08: case 0x09: /* RDMA WRITE (+imm) */
        if ((n = gather(idx, 2, ds, payload, sizeof payload)) < 0) return 0x04;
        if (find_mkey(rkey)) { /* an indirect mkey: scattered through its UMR translation */
            int rc = write_indirect(find_mkey(rkey), raddr, payload, (uint64_t)n);
            if (rc) return rc;
        } else {
            if (!check(rkey, raddr, n, REMOTE_WRITE)) return 0x13;
            memcpy((void *)(uintptr_t)raddr, payload, n);
        }
        if (op == 0x09) {
            if (m.rtail == m.rhead) return 0x16; /* RNR: no receive posted */
            uint32_t i = m.rtail++ & 255;
            cqe(&m.rcq, 1, m.rqpn, 0, (uint32_t)n, imm_be, 0);
            (void)i;
        }
        return 0;
    case 0x0a: case 0x0b: case 0x01: { /* SEND (+imm, +inv) */
        if ((n = gather(idx, 1, ds, payload, sizeof payload)) < 0) return 0x04;
        if (m.rq) return deliver_rq(n, op == 0x0a ? 2 : op == 0x0b ? 3 : 4, imm_be);
        if (m.rtail == m.rhead) return 0x16;
        uint32_t i = m.rtail++ & 255;
        if (n > m.rlen[i] || !check(m.rlkey[i], m.raddr[i], n, LOCAL_WRITE)) return 0x14; /* remote op error */
        memcpy((void *)(uintptr_t)m.raddr[i], payload, n);
        cqe(&m.rcq, op == 0x0a ? 2 : op == 0x0b ? 3 : 4, m.rqpn, (uint16_t)i, (uint32_t)n, imm_be, 0);
        return 0;
    }
    case 0x10: { /* RDMA READ: the length is the sum of the local SGEs */
        long want = 0;
        for (int k = 2; k < ds; k++) want += be32toh(*(uint32_t *)seg(idx, k));
        if (!check(rkey, raddr, want, REMOTE_READ)) return 0x13;
        memcpy(payload, (void *)(uintptr_t)raddr, want);
        if (scatter(idx, 2, ds, payload, want) < 0) return 0x04;
        *byte_cnt = (uint32_t)want;
        return 0;
    }
    case 0x11: case 0x12: { /* atomics: ctrl | raddr | atomic | data */
        uint8_t *a = seg(idx, 2);
        uint64_t swap_add = be64toh(*(uint64_t *)a), cmp = be64toh(*(uint64_t *)(a + 8));
        if (!check(rkey, raddr, 8, REMOTE_ATOMIC) || (raddr & 7)) return 0x13;
        uint64_t *t = (uint64_t *)(uintptr_t)raddr, old = be64toh(*t);
        if (op == 0x11) { if (old == cmp) *t = htobe64(swap_add); } else *t = htobe64(old + swap_add);
        uint64_t be_old = htobe64(old);
        if (scatter(idx, 3, 4, (uint8_t *)&be_old, 8) < 0) return 0x04;
        *byte_cnt = 8;
        return 0;
    }
    case 0x25: /* UMR */
        return umr(idx, ds, imm_be);
    default:
        return 0x02; /* local QP operation error */
    }
}

/* the doorbell: runs every WQE up to the doorbell record's counter; returns how many */
int model_doorbell(void) {
    uint32_t target = be32toh(m.dbrec[1]) & 0xffff;
    int done = 0;
    while ((m.ci & 0xffff) != target) {
        uint32_t idx = m.ci & (m.wqe_cnt - 1);
        uint32_t w0 = be32toh(*(uint32_t *)seg(idx, 0)), w1 = be32toh(*(uint32_t *)(seg(idx, 0) + 4));
        int op = w0 & 0xff, ds = w1 & 0x3f;
        uint16_t counter = (uint16_t)(w0 >> 8);
        uint8_t fm_ce_se = seg(idx, 0)[11];
        uint32_t imm_be = *(uint32_t *)(seg(idx, 0) + 12);
        uint32_t byte_cnt = 0;
        int syndrome = m.error ? 0x05 : m.fail_next ? m.fail_next
                : m.light ? 0 : execute(idx, op, ds, imm_be, &byte_cnt);
        m.fail_next = 0;
        if (syndrome) {
            m.error = 1;
            cqe(&m.scq, 13, (uint32_t)op << 24 | m.qpn, counter, 0, 0, syndrome);
        } else if (fm_ce_se & 0x08) {
            cqe(&m.scq, 0, (uint32_t)op << 24 | m.qpn, counter, byte_cnt, 0, 0);
        }
        m.ci += (ds * 16 + 63) / 64;
        done++;
    }
    return done;
}
