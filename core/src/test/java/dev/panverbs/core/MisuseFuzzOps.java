package dev.panverbs.core;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The world and the operation catalogue of {@link MisuseFuzzHostTest}: real panverbs objects over the fake provider
 * (closable PDs, CQs, RC and UD QPs, regions over confined, shared and automatic arenas with or without the arena tie,
 * windows, address handles, chains, batches, completion arrays), and {@link #step} draws one operation, valid or not,
 * on objects drawn from everything ever made (closed ones included). Each step records what it does in
 * {@link #trace} before doing it; the test judges what it throws. The DMA-safety oracle runs inside the fake's dereg:
 * a region deregistered by anything but its arena's tie must not be named by an outstanding WR of a live QP.
 */
final class MisuseFuzzOps {
    static final long CROSS_THREAD_TIMEOUT_S = 10;
    private static final Set<Access> BINDABLE = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.MW_BIND,
            Access.REMOTE_READ);
    private static final long[] OFFSETS = {0, 0, 8, 64, 4032, 4095, 4096, 4097, -1, -64, Integer.MAX_VALUE,
            Long.MAX_VALUE, Long.MIN_VALUE, Long.MAX_VALUE - 63};
    private static final int[] LENGTHS = {0, 1, 8, 64, 64, 4096, 4097, -1, Integer.MAX_VALUE, Integer.MIN_VALUE};

    /** The fake dereg of a region: its tracking id and the arena whose tie may deregister it under WRs. */
    private record Registration(MemoryRegion[] region, long trackingId, Arena tie) {
    }

    final FakeProvider fake;
    final Random rnd;
    final ExecutorService other;
    final List<String> trace = new ArrayList<>();
    /** DMA-safety violations seen by the dereg hook (it must not throw: the test reports them). */
    final List<String> violations = new ArrayList<>();
    final ProtectionDomain defaultPd;
    final List<ProtectionDomain> pds = new ArrayList<>();
    final List<CompletionQueue> cqs = new ArrayList<>();
    final ExtendedCompletionQueue ecq;
    final List<QueuePair> qps = new ArrayList<>();
    final List<Arena> arenas = new ArrayList<>();
    final List<MemorySegment> segments = new ArrayList<>();
    final List<MemoryRegion> mrs = new ArrayList<>();
    final List<MemoryWindow> mws = new ArrayList<>();
    final List<AddressHandle> ahs = new ArrayList<>();
    final List<WorkCompletions> wcs = new ArrayList<>();
    final Map<QueuePair, PostBatch> batches = new HashMap<>();
    /** What the seed exercised: how often each kind of step succeeded or threw what (for the run's log). */
    final Map<String, Integer> stats = new java.util.TreeMap<>();
    private final Map<Long, Registration> registrations = new HashMap<>();
    final Arena ahMemory = Arena.ofAuto();
    /** The arena whose close is running (its tie deregisters under outstanding WRs by design). */
    private Arena closingArena;
    private int nextKey;
    long nextWrId = 1;

    MisuseFuzzOps(FakeProvider fake, long seed, ExecutorService other) {
        this.fake = fake;
        this.rnd = new Random(seed);
        this.other = other;
        this.nextKey = (int) (seed & 0xFFFF) << 12;
        this.defaultPd = fake.protectionDomain();
        pds.add(defaultPd);
        pds.add(fake.newClosablePd());
        cqs.add(fake.createCq(256));
        cqs.add(fake.createCq(4));
        ecq = fake.createCqEx(64, EnumSet.of(CompletionField.BYTE_LEN, CompletionField.QP_NUM));
        cqs.add(ecq);
        wcs.add(WorkCompletions.allocate(1));
        wcs.add(WorkCompletions.allocate(16));
    }

    /** Whether the current step passed a null argument (then a NullPointerException is its documented answer). */
    boolean passedNull;

    <T> T pick(List<T> list) {
        T t = list.isEmpty() ? null : list.get(rnd.nextInt(list.size()));
        if (t instanceof VerbsObject v && v.isClosed() && rnd.nextInt(4) != 0) { // mostly live: the valid paths run too
            List<T> live = list.stream().filter(o -> !((VerbsObject) o).isClosed()).toList();
            t = live.isEmpty() ? t : live.get(rnd.nextInt(live.size()));
        }
        passedNull |= t == null;
        return t;
    }

    /** A valid SGE more often than not: {@code [offset, offset + length)} inside {@code mr}. */
    private long[] range(MemoryRegion mr) {
        if (mr == null || rnd.nextInt(3) == 0) {
            return new long[] {offset(), length()};
        }
        long size = mr.snapshot.length;
        long len = 1 + rnd.nextInt((int) Math.min(size, 256));
        return new long[] {rnd.nextLong(size - len + 1), len};
    }

    long offset() {
        return rnd.nextInt(4) == 0 ? rnd.nextInt(8192) - 64 : OFFSETS[rnd.nextInt(OFFSETS.length)];
    }

    int length() {
        return rnd.nextInt(4) == 0 ? rnd.nextInt(8192) : LENGTHS[rnd.nextInt(LENGTHS.length)];
    }

    int flags() {
        return switch (rnd.nextInt(6)) {
            case 0 -> 0;
            case 1 -> SendFlag.SIGNALED_BIT | SendFlag.FENCE_BIT;
            case 2 -> SendFlag.INLINE_BIT;
            case 3 -> rnd.nextInt();
            default -> SendFlag.SIGNALED_BIT;
        };
    }

    Set<Access> access() {
        return switch (rnd.nextInt(4)) {
            case 0 -> EnumSet.noneOf(Access.class);
            case 1 -> EnumSet.of(Access.REMOTE_READ);
            case 2 -> EnumSet.of(Access.REMOTE_WRITE, Access.LOCAL_WRITE);
            default -> EnumSet.of(Access.REMOTE_WRITE);
        };
    }

    /** A key for an SGE: usually a region, sometimes none at all. */
    MemoryRegion key() {
        if (rnd.nextInt(40) == 0) {
            passedNull = true;
            return null;
        }
        return pick(mrs);
    }

    /** Data for inline payload: heap, an arena's (maybe closed or confined), or empty. */
    MemorySegment inlineData() {
        int n = rnd.nextInt(5);
        if (n == 0 || segments.isEmpty()) {
            return MemorySegment.ofArray(new byte[rnd.nextInt(300)]);
        }
        MemorySegment s = pick(segments);
        long len = Math.min(s.byteSize(), rnd.nextInt(4) == 0 ? 4096 : rnd.nextInt(80));
        return n == 1 ? s : s.asSlice(0, len);
    }

    /** The step being run, for the trace. */
    int stepIndex;

    void log(String what) {
        trace.add(stepIndex + ": " + what);
    }

    /** Draws and runs one operation; what it throws is the test's to judge. */
    void step() throws Exception {
        passedNull = false;
        int op = rnd.nextInt(100);
        if (op < 3) {
            newQp();
        } else if (op < 4) {
            log("newPd");
            pds.add(fake.newClosablePd());
        } else if (op < 6) {
            newArena();
        } else if (op < 12) {
            register();
        } else if (op < 14) {
            newWindow();
        } else if (op < 15) {
            log("newAh");
            ProtectionDomain pd = pick(pds);
            ahs.add(AddressHandle.wrap(pd, ahMemory.allocate(64), AddressVector.builder(1).build(), h -> { }));
        } else if (op < 16) {
            int n = rnd.nextInt(4) - 1;
            log("WorkCompletions.allocate(" + n + ")");
            wcs.add(WorkCompletions.allocate(n));
        } else if (op < 22) {
            close();
        } else if (op < 32) {
            chainSend(pick(qps));
        } else if (op < 40) {
            validTraffic();
        } else if (op < 46) {
            chainRecv(pick(qps));
        } else if (op < 62) {
            batch();
        } else if (op < 66) {
            MisuseFuzzMoreOps.windowOp(this);
        } else if (op < 78) {
            MisuseFuzzMoreOps.poll(this);
        } else if (op < 86) {
            MisuseFuzzMoreOps.crossThread(this);
        } else if (op < 90) {
            MisuseFuzzMoreOps.inject(this);
        } else {
            validTraffic(); // so that WRs are in flight when the misuse strikes
        }
    }

    private void newQp() {
        ProtectionDomain pd = pick(pds);
        CompletionQueue scq = pick(cqs);
        CompletionQueue rcq = pick(cqs);
        int sendWr = 1 + rnd.nextInt(8);
        boolean ud = rnd.nextInt(4) == 0;
        Set<SendOperation> ops = switch (rnd.nextInt(3)) {
            case 0 -> EnumSet.noneOf(SendOperation.class);
            case 1 -> EnumSet.of(SendOperation.SEND, SendOperation.RDMA_WRITE, SendOperation.RDMA_READ);
            default -> EnumSet.of(SendOperation.SEND, SendOperation.SEND_WITH_IMM, SendOperation.RDMA_WRITE,
                    SendOperation.BIND_MW, SendOperation.LOCAL_INV, SendOperation.ATOMIC_FETCH_AND_ADD);
        };
        log("newQp " + (ud ? "UD" : "RC " + pd) + " sendWr " + sendWr + " ops " + ops);
        qps.add(ud ? fake.createUdQp(scq, sendWr, ops.isEmpty() ? EnumSet.of(SendOperation.SEND) : ops)
                : fake.createRtsQp(pd, scq, rcq, sendWr, 1 + rnd.nextInt(8), 1 + rnd.nextInt(2), rnd.nextInt(128),
                ops));
    }

    private void newArena() {
        int kind = rnd.nextInt(3);
        Arena a = kind == 0 ? Arena.ofConfined() : kind == 1 ? Arena.ofShared() : Arena.ofAuto();
        log("newArena " + (kind == 0 ? "confined" : kind == 1 ? "shared" : "auto"));
        if (kind < 2) {
            arenas.add(a);
        }
        segments.add(a.allocate(rnd.nextBoolean() ? 4096 : 64 + rnd.nextInt(8192), 64));
    }

    private void register() {
        register(pick(pds));
    }

    private void register(ProtectionDomain pd) {
        MemorySegment s = pick(segments);
        if (s == null || !s.scope().isAlive()) {
            newArena();
            return;
        }
        Arena tie = null;
        for (Arena a : arenas) {
            if (a.scope() == s.scope() && rnd.nextBoolean()) {
                tie = a;
            }
        }
        int key = ++nextKey;
        log("register " + s.byteSize() + " B in " + pd + (tie != null ? " tied" : ""));
        MemoryRegion[] holder = new MemoryRegion[1];
        MemoryRegion mr = fake.register(pd, s, key, rnd.nextInt(8) == 0 ? EnumSet.of(Access.LOCAL_WRITE) : BINDABLE,
                h -> dereg(h.address()));
        holder[0] = mr;
        registrations.put(FakeProvider.handle(mr).address(), new Registration(holder,
                mr.snapshot.trackingId, tie));
        mrs.add(mr);
        if (tie != null) {
            mr.tieTo(tie);
        }
    }

    /** The DMA-safety oracle, inside the dereg: no live QP's outstanding WR may name the region. */
    private void dereg(long mrHandle) {
        Registration r = registrations.remove(mrHandle);
        if (r == null) {
            violations.add("dereg of an unknown ibv_mr 0x" + Long.toHexString(mrHandle));
            return;
        }
        int refs = 0;
        for (QueuePair qp : qps) {
            if (!qp.isClosed()) {
                refs += qp.sendQueue.tracker.references(r.trackingId);
                if (qp.receiveQueue != null) {
                    refs += qp.receiveQueue.tracker.references(r.trackingId);
                }
            }
        }
        boolean byTie = r.tie != null && r.tie == closingArena;
        if (refs > 0 && byTie) {
            stats.merge("dereg by the arena tie under outstanding WRs", 1, Integer::sum);
        }
        if (refs > 0 && !byTie) {
            violations.add("step " + stepIndex + ": " + r.region[0] + " deregistered while " + refs
                    + " outstanding work request(s) of a live QP name it");
        }
    }

    void newWindow() {
        ProtectionDomain pd = pick(pds);
        MemoryWindowType type = rnd.nextBoolean() ? MemoryWindowType.TYPE_1 : MemoryWindowType.TYPE_2;
        log("allocMw " + type + " in " + pd);
        mws.add(fake.allocMw(pd, type, (++nextKey) << 8));
    }

    private void close() {
        switch (rnd.nextInt(6)) {
            case 0 -> {
                QueuePair qp = pick(qps);
                log("close " + qp);
                if (qp != null) {
                    qp.close();
                }
            }
            case 1 -> {
                ProtectionDomain pd = pick(pds);
                log("close " + pd);
                if (pd != null && pd != defaultPd) { // the fake's own PD has no dealloc; the adopted ones cascade
                    pd.close();
                }
            }
            case 2 -> {
                Arena a = pick(arenas);
                log("close arena " + a);
                if (a != null && a.scope().isAlive()) { // a second Arena.close() is the JDK's refusal, not ours
                    closingArena = a;
                    try {
                        a.close(); // a confined one of this thread; a tied region is deregistered first
                    } finally {
                        closingArena = null;
                    }
                }
            }
            case 3 -> {
                MemoryWindow mw = pick(mws);
                log("close " + mw);
                if (mw != null) {
                    mw.close();
                }
            }
            case 4 -> {
                AddressHandle ah = pick(ahs);
                log("close " + ah);
                if (ah != null) {
                    ah.close();
                }
            }
            default -> {
                MemoryRegion mr = pick(mrs);
                log("close " + mr);
                if (mr != null) {
                    mr.close();
                }
            }
        }
    }

    private void chainSend(QueuePair qp) {
        if (qp == null) {
            newQp();
            return;
        }
        int n = 1 + rnd.nextInt(3);
        log("chain send x" + n + " on " + qp);
        SendRequests s = qp.sendRequests();
        try {
            buildAndPost(qp, s, n);
        } catch (RuntimeException e) {
            if (rnd.nextInt(4) != 0) {
                s.clear(); // what a caller that catches usually does; else the chain keeps its staged WRs
            }
            throw e;
        }
    }

    private void buildAndPost(QueuePair qp, SendRequests s, int n) {
        for (int i = 0; i < n; i++) {
            long id = nextWrId++;
            int f = flags() & ~SendFlag.INLINE_BIT;
            int rkey = rnd.nextInt(), imm = rnd.nextInt();
            long raddr = offset();
            switch (rnd.nextInt(8)) {
                case 0 -> s.rdmaWrite(id, f, rkey, raddr);
                case 1 -> s.rdmaRead(id, f, rkey, raddr);
                case 2 -> s.sendWithImm(id, f, imm);
                case 3 -> s.atomicFetchAdd(id, f, rkey, raddr & ~7L, 1);
                case 4 -> s.localInv(id, f, rkey);
                default -> s.send(id, f);
            }
            int sges = rnd.nextInt(4);
            for (int j = 0; j < sges; j++) {
                if (rnd.nextInt(5) == 0) {
                    s.inline(inlineData());
                } else {
                    MemoryRegion k = key();
                    long[] r = range(k);
                    s.sge(k, r[0], (int) r[1]);
                }
            }
            if (qp.type() == QueuePairType.UD && rnd.nextInt(6) != 0) {
                s.ud(pick(ahs), rnd.nextInt(0x1000000), 0x11);
            }
        }
        if (rnd.nextInt(8) == 0) {
            log("  clear");
            s.clear();
        } else {
            log("  post");
            s.post();
        }
    }

    /** A valid WR (open QP, a live key of its PD, in range, a supported opcode): traffic for the misuse to hit. */
    private void validTraffic() {
        List<QueuePair> live = qps.stream().filter(q -> !q.isClosed()).toList();
        if (live.isEmpty()) {
            newQp();
            return;
        }
        QueuePair qp = live.get(rnd.nextInt(live.size()));
        List<MemoryRegion> keys = mrs.stream().filter(m -> m.isOpen() && m.protectionDomain() == qp.protectionDomain()
                && m.snapshot.memoryAlive()).toList();
        if (keys.isEmpty()) {
            register(qp.protectionDomain());
            return;
        }
        MemoryRegion mr = keys.get(rnd.nextInt(keys.size()));
        long id = nextWrId++;
        long off = rnd.nextLong(mr.snapshot.length - 63);
        if (qp.receiveQueue != null && rnd.nextInt(3) == 0) {
            log("valid recv on " + qp + " over " + mr);
            qp.receiveRequests().recv(id).sge(mr, off, 64).post();
            return;
        }
        int f = rnd.nextBoolean() ? SendFlag.SIGNALED_BIT : 0;
        SendRequests s = qp.sendRequests();
        if (qp.type() == QueuePairType.UD) {
            List<AddressHandle> ah = ahs.stream().filter(a -> !a.isClosed()
                    && a.protectionDomain() == qp.protectionDomain()).toList();
            if (ah.isEmpty()) {
                log("newAh for " + qp);
                ahs.add(AddressHandle.wrap(qp.protectionDomain(), ahMemory.allocate(64),
                        AddressVector.builder(1).build(), h -> { }));
                return;
            }
            log("valid UD send on " + qp + " over " + mr);
            s.send(id, f).sge(mr, off, 64).ud(ah.get(rnd.nextInt(ah.size())), 7, 0x11);
        } else {
            log("valid RC write/send/read on " + qp + " over " + mr);
            switch (rnd.nextInt(3)) {
                case 0 -> s.rdmaWrite(id, f, 0x99, 0x1000).sge(mr, off, 64);
                case 1 -> s.send(id, f).sge(mr, off, 64);
                default -> s.rdmaRead(id, f, 0x99, 0x1000).sge(mr, off, 64);
            }
        }
        try {
            s.post();
        } catch (RuntimeException e) {
            s.clear();
            throw e;
        }
    }

    private void chainRecv(QueuePair qp) {
        if (qp == null) {
            return;
        }
        log("chain recv on " + qp);
        ReceiveRequests r = qp.receiveRequests();
        int n = 1 + rnd.nextInt(3);
        try {
            for (int i = 0; i < n; i++) {
                r.recv(nextWrId++);
                for (int j = rnd.nextInt(3); j > 0; j--) {
                    MemoryRegion k = key();
                    long[] range = range(k);
                    r.sge(k, range[0], (int) range[1]);
                }
            }
            if (rnd.nextInt(8) == 0) {
                r.clear();
            } else {
                r.post();
            }
        } catch (RuntimeException e) {
            if (rnd.nextInt(4) != 0) {
                r.clear();
            }
            throw e;
        }
    }

    /** One step of the ibv_wr_* batch protocol, in or out of order, on a QP's batch (maybe stale). */
    private void batch() {
        QueuePair qp = pick(qps);
        if (qp == null) {
            return;
        }
        PostBatch b = batches.get(qp);
        int op = rnd.nextInt(b == null ? 1 : 10);
        long id = nextWrId++;
        switch (op) {
            case 0 -> {
                log("startSend on " + qp + (b != null && b.isOpen() ? " (batch open)" : ""));
                batches.put(qp, qp.startSend());
            }
            case 1, 2 -> {
                log("batch rdmaWrite+setSge on " + qp);
                MemoryRegion k = key();
                long[] r = range(k);
                b.rdmaWrite(id, flags() & ~SendFlag.INLINE_BIT, rnd.nextInt(), offset()).setSge(k, r[0], (int) r[1]);
            }
            case 3 -> {
                log("batch send+setSgeList on " + qp);
                int n = rnd.nextInt(4) - 1;
                int m = Math.max(0, rnd.nextInt(3));
                LocalKey[] keys = new LocalKey[m];
                long[] offs = new long[m];
                int[] lens = new int[rnd.nextInt(3) == 0 ? m + 1 : m];
                for (int i = 0; i < m; i++) {
                    keys[i] = key();
                    offs[i] = offset();
                    lens[i] = length();
                }
                b.send(id, flags() & ~SendFlag.INLINE_BIT).setSgeList(keys, offs, lens, n);
            }
            case 4 -> {
                log("batch sendWithImm+setInlineData on " + qp);
                b.sendWithImm(id, flags(), rnd.nextInt()).setInlineData(inlineData());
            }
            case 5 -> {
                log("batch setUdAddr on " + qp);
                b.send(id, SendFlag.SIGNALED_BIT).setUdAddr(pick(ahs), 7, 0x11).setSge(key(), 0, 64);
            }
            case 6 -> {
                MemoryWindow mw = pick(mws);
                log("batch bindMw " + mw + " on " + qp);
                b.bindMw(id, SendFlag.SIGNALED_BIT, mw, mw == null ? 0 : MemoryWindow.nextRkey(mw.rkey()), pick(mrs),
                        offset(), length(), access());
            }
            case 7 -> {
                log("batch close (abort) on " + qp);
                b.close();
            }
            default -> {
                log("batch submit on " + qp);
                b.submit();
            }
        }
    }

}
