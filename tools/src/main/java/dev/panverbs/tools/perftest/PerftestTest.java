package dev.panverbs.tools.perftest;

/** The six perftest programs panverbs clones, with the per-program defaults of perftest 4.5 (6.06). */
public enum PerftestTest {
    WRITE_BW("ib_write_bw", Verb.WRITE, Kind.BW),
    READ_BW("ib_read_bw", Verb.READ, Kind.BW),
    SEND_BW("ib_send_bw", Verb.SEND, Kind.BW),
    WRITE_LAT("ib_write_lat", Verb.WRITE, Kind.LAT),
    READ_LAT("ib_read_lat", Verb.READ, Kind.LAT),
    SEND_LAT("ib_send_lat", Verb.SEND, Kind.LAT);

    /** The operation a test measures; {@link #title()} is perftest's {@code testsStr}. */
    public enum Verb {
        SEND("Send"), WRITE("RDMA_Write"), READ("RDMA_Read");

        private final String title;

        Verb(String title) {
            this.title = title;
        }

        /** The word perftest prints in the header and JSON, e.g. {@code RDMA_Write}. */
        public String title() {
            return title;
        }
    }

    /** Bandwidth or latency test: perftest's {@code user_param->tst} ({@code BW}, {@code LAT}). */
    public enum Kind { BW, LAT }

    private final String programName;
    private final Verb verb;
    private final Kind kind;

    PerftestTest(String programName, Verb verb, Kind kind) {
        this.programName = programName;
        this.verb = verb;
        this.kind = kind;
    }

    /** The command name, e.g. {@code ib_write_bw}. */
    public String programName() {
        return programName;
    }

    public Verb verb() {
        return verb;
    }

    public Kind kind() {
        return kind;
    }

    public boolean isBw() {
        return kind == Kind.BW;
    }

    /** Default -n: 5000 for ib_write_bw only (DEF_ITERS_WB), 1000 for the others (DEF_ITERS). */
    int defaultIters() {
        return this == WRITE_BW ? 5000 : 1000;
    }

    /** Default -s: 65536 for BW tests (DEF_SIZE_BW), 2 for latency tests (DEF_SIZE_LAT). */
    long defaultSize() {
        return kind == Kind.BW ? 65536 : 2;
    }

    /** Default -t: 128 for BW (DEF_TX_BW), 1 for latency (DEF_TX_LAT). */
    int defaultTxDepth() {
        return kind == Kind.BW ? 128 : 1;
    }

    /** The test whose program name is {@code name}, or {@code null}. */
    public static PerftestTest byProgramName(String name) {
        for (PerftestTest t : values()) {
            if (t.programName.equals(name)) {
                return t;
            }
        }
        return null;
    }
}
