package dev.panverbs.tools.perftest;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An in-process stand-in for a RoCE device, for host tests of everything above the verbs: the TCP exchange, the
 * test flows, the post/poll bookkeeping and the reports. Both sides of a test run in one JVM and find each other
 * by QPN and rkey in static tables; a WRITE/READ copies bytes between the two sides' buffers, a SEND lands in the
 * peer's oldest posted receive (RC waits for one, like an infinite RNR retry; UD drops). Every signaled WR
 * completes at once. It checks addresses against registered buffers as a NIC would, so a wrong VAddr or rkey
 * from the exchange fails the run. This is not a verbs emulation: the real data path is tested by the *IT
 * classes on Soft-RoCE.
 */
final class SimulatedEngine implements VerbsEngine {
    static final AtomicInteger NEXT_QPN = new AtomicInteger(0x11);
    static final AtomicInteger NEXT_KEY = new AtomicInteger(0x254);
    static final Map<Integer, SimQp> QPS = new ConcurrentHashMap<>();
    static final Map<Integer, MemorySegment> MRS = new ConcurrentHashMap<>();

    /** ::ffff:127.0.0.1 as the RoCE v2 GID at index 1, a link-local one at index 0, as rxe has. */
    static final byte[] GID0 = {(byte) 0xfe, (byte) 0x80, 0, 0, 0, 0, 0, 0, 0x50, 0x54, 0, (byte) 0xff, (byte) 0xfe,
            0x12, 0x34, 0x56};
    static final byte[] GID1 = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, (byte) 0xff, 127, 0, 0, 1};

    private final List<String> names;
    boolean ethernet = true;
    int activeMtu = 3;

    SimulatedEngine(String... names) {
        this.names = List.of(names);
    }

    @Override
    public List<String> deviceNames() {
        return names;
    }

    @Override
    public Device open(String name) {
        return new SimDevice(name);
    }

    final class SimDevice implements Device {
        final String name;

        SimDevice(String name) {
            this.name = name;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public String transport() {
            return "IB";
        }

        @Override
        public int vendorId() {
            return 0xffffff;
        }

        @Override
        public int vendorPartId() {
            return 0;
        }

        @Override
        public int maxQpRdAtom() {
            return 128;
        }

        @Override
        public int maxPkeys() {
            return 64;
        }

        @Override
        public int numCompVectors() {
            return 1;
        }

        @Override
        public boolean supportsWrApi() {
            return true;
        }

        @Override
        public PortInfo port(int port) {
            if (port != 1) {
                throw new IllegalArgumentException("ibv_query_port(port=" + port + ") failed: EINVAL");
            }
            return new PortInfo(PortInfo.ACTIVE, ethernet, activeMtu, ethernet ? 0 : 1, 16);
        }

        @Override
        public List<GidEntry> gids(int port) {
            return List.of(new GidEntry(0, GID0, "RoCE v2"), new GidEntry(1, GID1, "RoCE v2"));
        }

        @Override
        public Resources allocate(ResourceSpec spec) {
            return new SimResources(spec);
        }

        @Override
        public void close() {
        }
    }

    static final class SimResources implements Resources {
        final ResourceSpec spec;
        final Arena arena = Arena.ofShared();
        final MemorySegment[] bufs;
        final int[] keys;
        final SimQp[] qps;
        final SimCq sendCq = new SimCq();
        final SimCq recvCq;

        SimResources(ResourceSpec spec) {
            this.spec = spec;
            int n = spec.mrPerQp() ? spec.numQps() : 1;
            bufs = new MemorySegment[n];
            keys = new int[n];
            Random r = new Random(7);
            for (int i = 0; i < n; i++) {
                bufs[i] = arena.allocate(spec.bufferSize(), 4096);
                if (!spec.zeroFill()) {
                    byte[] b = new byte[(int) spec.bufferSize()];
                    r.nextBytes(b);
                    MemorySegment.copy(b, 0, bufs[i], ValueLayout.JAVA_BYTE, 0, b.length);
                }
                keys[i] = NEXT_KEY.getAndIncrement();
                MRS.put(keys[i], bufs[i]);
            }
            recvCq = spec.verb() == PerftestTest.Verb.SEND ? new SimCq() : sendCq;
            qps = new SimQp[spec.numQps()];
            for (int i = 0; i < qps.length; i++) {
                qps[i] = new SimQp(this, bufs[spec.mrPerQp() ? i : 0]);
                QPS.put(qps[i].qpn, qps[i]);
            }
        }

        @Override
        public MemorySegment buffer(int mr) {
            return bufs[mr];
        }

        @Override
        public int lkey(int mr) {
            return keys[mr];
        }

        @Override
        public int rkey(int mr) {
            return keys[mr];
        }

        @Override
        public Qp qp(int i) {
            return qps[i];
        }

        @Override
        public Cq sendCq() {
            return sendCq;
        }

        @Override
        public Cq recvCq() {
            return recvCq;
        }

        @Override
        public boolean usesWrApi() {
            return spec.useWrApi();
        }

        @Override
        public void close() {
            for (SimQp q : qps) {
                QPS.remove(q.qpn);
            }
            for (int k : keys) {
                MRS.remove(k);
            }
            arena.close();
        }
    }

    static final class SimQp implements Qp {
        final SimResources res;
        final MemorySegment buf;
        final int qpn = NEXT_QPN.getAndIncrement();
        int remoteQpn = -1;
        boolean rts;
        int length;
        int rkey;
        final ArrayDeque<long[]> recvs = new ArrayDeque<>();
        final ArrayDeque<byte[]> unreceived = new ArrayDeque<>();

        SimQp(SimResources res, MemorySegment buf) {
            this.res = res;
            this.buf = buf;
        }

        @Override
        public int qpNum() {
            return qpn;
        }

        @Override
        public int maxInlineData() {
            return Math.max(0, res.spec.inlineSize());
        }

        @Override
        public void connect(Connect c) {
            remoteQpn = c.remoteQpn();
            rts = c.toRts();
        }

        @Override
        public void configureSend(int length, int lkey, int rkey, boolean inline, int remoteQpn, int remoteQkey) {
            this.length = length;
            this.rkey = rkey;
            if (res.spec.connection() == PerftestParameters.Connection.UD) {
                this.remoteQpn = remoteQpn;
            }
        }

        private MemorySegment local(long addr, long len) {
            long off = addr - buf.address();
            if (off < 0 || off + len > buf.byteSize()) {
                throw new IllegalStateException("local address 0x" + Long.toHexString(addr) + " outside the MR");
            }
            return buf.asSlice(off, len);
        }

        private static MemorySegment remote(int rkey, long addr, long len) {
            MemorySegment mr = MRS.get(rkey);
            long off = mr == null ? -1 : addr - mr.address();
            if (mr == null || off < 0 || off + len > mr.byteSize()) {
                return null;
            }
            return mr.asSlice(off, len);
        }

        @Override
        public int post(int count, long[] localAddr, long[] remoteAddr, long signaledMask, long wrId) {
            if (!rts) {
                return 22;
            }
            for (int k = 0; k < count; k++) {
                int status = execute(localAddr[k], remoteAddr[k]);
                if (status != 0 || ((signaledMask >>> k) & 1) != 0) {
                    res.sendCq.add(wrId, status);
                }
            }
            return 0;
        }

        /** One WR; a peer that closed its memory meanwhile is a responder that is gone (RETRY_EXC_ERR, 12). */
        private int execute(long localAddr, long remoteAddr) {
            switch (res.spec.verb()) {
                case WRITE, READ -> {
                    MemorySegment r = remote(rkey, remoteAddr, length);
                    if (r == null) {
                        return 10; // REM_ACCESS_ERR
                    }
                    try {
                        if (res.spec.verb() == PerftestTest.Verb.WRITE) {
                            r.copyFrom(local(localAddr, length));
                        } else {
                            local(localAddr, length).copyFrom(r);
                        }
                    } catch (IllegalStateException e) {
                        if (r.scope().isAlive()) {
                            throw e;
                        }
                        return 12;
                    }
                }
                case SEND -> {
                    SimQp peer = QPS.get(remoteQpn);
                    if (peer == null) {
                        return 12;
                    }
                    try {
                        peer.deliver(local(localAddr, length).toArray(ValueLayout.JAVA_BYTE));
                    } catch (IllegalStateException e) {
                        if (peer.buf.scope().isAlive()) {
                            throw e;
                        }
                        return 12;
                    }
                }
            }
            return 0;
        }

        synchronized void deliver(byte[] data) {
            long[] r = recvs.poll();
            if (r == null) {
                if (res.spec.connection() != PerftestParameters.Connection.UD) {
                    unreceived.add(data); // RC/UC: as if the sender retried until a receive is posted
                }
                return;
            }
            land(r, data);
        }

        private void land(long[] r, byte[] data) {
            int grh = res.spec.connection() == PerftestParameters.Connection.UD ? 40 : 0;
            if (data.length + grh > r[1]) {
                res.recvCq.add(r[2], 1); // LOC_LEN_ERR
                return;
            }
            MemorySegment.copy(data, 0, local(r[0] + grh, data.length), ValueLayout.JAVA_BYTE, 0, data.length);
            res.recvCq.add(r[2], 0);
        }

        @Override
        public synchronized int postRecv(long addr, int len, int lkey, long wrId) {
            long[] r = {addr, len, wrId};
            byte[] pending = unreceived.poll();
            if (pending != null) {
                land(r, pending);
            } else {
                recvs.add(r);
            }
            return 0;
        }
    }

    static final class SimCq implements Cq {
        private final ConcurrentLinkedQueue<long[]> q = new ConcurrentLinkedQueue<>();
        private final long[] wrIds = new long[BATCH];
        private final int[] statuses = new int[BATCH];

        void add(long wrId, int status) {
            q.add(new long[] {wrId, status});
        }

        @Override
        public int poll(int max) {
            int n = 0;
            while (n < max) {
                long[] e = q.poll();
                if (e == null) {
                    break;
                }
                wrIds[n] = e[0];
                statuses[n] = (int) e[1];
                n++;
            }
            return n;
        }

        @Override
        public long wrId(int i) {
            return wrIds[i];
        }

        @Override
        public int status(int i) {
            return statuses[i];
        }

        @Override
        public int vendorErr(int i) {
            return 0;
        }

        @Override
        public String statusName(int status) {
            return switch (status) {
                case 1 -> "LOC_LEN_ERR";
                case 10 -> "REM_ACCESS_ERR";
                case 12 -> "RETRY_EXC_ERR";
                default -> "status " + status;
            };
        }

        @Override
        public void requestNotify() {
        }

        @Override
        public boolean awaitEvent(long timeoutMillis) {
            long end = System.nanoTime() + timeoutMillis * 1_000_000L;
            while (q.isEmpty()) {
                if (System.nanoTime() > end) {
                    return false;
                }
                Thread.onSpinWait();
            }
            return true;
        }
    }

    /** Helper for assertions: all simulated QPs ever made are gone (resources closed). */
    static List<Integer> liveQps() {
        return new ArrayList<>(QPS.keySet());
    }
}
