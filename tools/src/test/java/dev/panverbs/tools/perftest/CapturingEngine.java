package dev.panverbs.tools.perftest;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@link VerbsEngine} decorator for data checks: fills every registered buffer with a pattern of its own seed
 * (the byte at offset {@code o} depends on {@code o mod period}, so every QP area of the buffer holds the same
 * sequence) and keeps a copy of each buffer as it is when the run ends, before the resources are released.
 */
final class CapturingEngine implements VerbsEngine {
    private final VerbsEngine delegate;
    private final int seed;
    private final long period;
    final List<byte[]> finalBuffers = new ArrayList<>();

    CapturingEngine(VerbsEngine delegate, int seed, long period) {
        this.delegate = delegate;
        this.seed = seed;
        this.period = period;
    }

    /** The pattern byte at relative offset {@code rel} of an area, for {@code seed}. */
    static byte pattern(int seed, long rel) {
        long x = rel * 0x9E3779B97F4A7C15L + seed * 0x632BE59BD9B4E019L;
        return (byte) (x >>> 56 ^ x >>> 29);
    }

    @Override
    public List<String> deviceNames() {
        return delegate.deviceNames();
    }

    @Override
    public Device open(String name) {
        Device d = delegate.open(name);
        return new Device() {
            @Override
            public String name() {
                return d.name();
            }

            @Override
            public String transport() {
                return d.transport();
            }

            @Override
            public int vendorId() {
                return d.vendorId();
            }

            @Override
            public int vendorPartId() {
                return d.vendorPartId();
            }

            @Override
            public int maxQpRdAtom() {
                return d.maxQpRdAtom();
            }

            @Override
            public int maxPkeys() {
                return d.maxPkeys();
            }

            @Override
            public int numCompVectors() {
                return d.numCompVectors();
            }

            @Override
            public boolean supportsWrApi() {
                return d.supportsWrApi();
            }

            @Override
            public PortInfo port(int port) {
                return d.port(port);
            }

            @Override
            public List<GidEntry> gids(int port) {
                return d.gids(port);
            }

            @Override
            public Resources allocate(ResourceSpec spec) {
                return capture(d.allocate(spec), spec);
            }

            @Override
            public void close() {
                d.close();
            }
        };
    }

    private Resources capture(Resources r, ResourceSpec spec) {
        int mrs = spec.mrPerQp() ? spec.numQps() : 1;
        for (int m = 0; m < mrs; m++) {
            MemorySegment b = r.buffer(m);
            byte[] fill = new byte[(int) b.byteSize()];
            for (int i = 0; i < fill.length; i++) {
                fill[i] = pattern(seed, i % period);
            }
            MemorySegment.copy(fill, 0, b, ValueLayout.JAVA_BYTE, 0, fill.length);
        }
        return new Resources() {
            @Override
            public MemorySegment buffer(int mr) {
                return r.buffer(mr);
            }

            @Override
            public int lkey(int mr) {
                return r.lkey(mr);
            }

            @Override
            public int rkey(int mr) {
                return r.rkey(mr);
            }

            @Override
            public Qp qp(int i) {
                return r.qp(i);
            }

            @Override
            public Cq sendCq() {
                return r.sendCq();
            }

            @Override
            public Cq recvCq() {
                return r.recvCq();
            }

            @Override
            public boolean usesWrApi() {
                return r.usesWrApi();
            }

            @Override
            public void close() {
                synchronized (finalBuffers) {
                    for (int m = 0; m < mrs; m++) {
                        finalBuffers.add(r.buffer(m).toArray(ValueLayout.JAVA_BYTE));
                    }
                }
                r.close();
            }
        };
    }
}
