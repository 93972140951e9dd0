package dev.panverbs.tools.perftest;

/**
 * The test configuration: the subset of perftest's {@code struct perftest_parameters} that panverbs implements,
 * with perftest's names, defaults and sentinels. {@link PerftestParser} fills it from the command line and applies
 * perftest's {@code force_dependecies}; the session then completes the device-dependent fields (MTU, link type,
 * GID index, inline size, outstanding reads) exactly where perftest does.
 *
 * <p>A plain mutable holder, confined to the thread that runs the test.
 */
final class PerftestParameters implements Cloneable {
    /** Connection types that panverbs supports ({@code connStr} order is RC, UC, UD, RawEth, XRC, DC, SRD). */
    enum Connection { RC, UC, UD }

    enum Machine { SERVER, CLIENT }

    /** How many sizes to run: one (-s), all 2..2^23 (-a), or forever (--run_infinitely). */
    enum TestMethod { REGULAR, ALL, INFINITELY }

    /** Iteration count (-n) or fixed duration (-D). */
    enum TestType { ITERATIONS, DURATION }

    /** {@code --output}: everything, or just one number. */
    enum Output { FULL, BANDWIDTH, MESSAGE_RATE, LATENCY }

    /** Link layer as perftest names it ({@code link_layer_str}). */
    enum LinkType {
        IB("IB"), ETHERNET("Ethernet");

        final String label;

        LinkType(String label) {
            this.label = label;
        }
    }

    static final int DEF_PORT = 18515;
    static final int DEF_GID_INDEX = -1;
    static final int DEF_INLINE = -1;
    static final int DEF_INIT_MARGIN = -1;
    static final int DEF_TOS = -1;
    static final int DEF_RETRY_COUNT = 7;
    static final int DEF_HOP_LIMIT = 64;
    static final int DEF_CQ_MOD = 100;
    static final int DEF_RX_SEND = 512;
    static final int DEF_RX_RDMA = 1;
    static final int DEF_DURATION = 5;
    static final int MAX_SIZE = 8388608;
    static final int MAX_INLINE_UD = 884;
    static final int MSG_SIZE_CQ_MOD_LIMIT = 8192;
    static final String DEFAULT_JSON_FILE_NAME = "perftest_out.json";
    /** The perftest version this clone speaks on the wire and prints for -V. */
    static final String VERSION = "6.06";

    final PerftestTest test;

    // command line (perftest names in comments where they differ)
    int port = DEF_PORT;
    String ibDevName;
    int ibPort = 1;
    int mtu; // 0 = the port's active MTU
    long size;
    boolean reqSize;
    int iters;
    int txDepth;
    int rxDepth;
    int qpTimeout = 14;
    int sl;
    int gidIndex = DEF_GID_INDEX;
    boolean useGidUser;
    Connection connection = Connection.RC;
    /** {@code -c XRC} or {@code -c DC} ({@link #connection} then stays RC; see {@link XrcDcConnection}), or null. */
    XrcDcConnection.Kind xrcDc;
    /** --log_dci_streams (DC only; 0 = a plain DCI). */
    int logDciStreams;
    /** --log_active_dci_streams; -1 until given, then perftest takes --log_dci_streams. */
    int logActiveDciStreams = -1;
    int numQps = 1;
    int inlineSize = DEF_INLINE;
    int outReads; // 0 = the device's max_qp_rd_atom
    int cqMod = DEF_CQ_MOD;
    boolean reqCqMod;
    int postList = 1;
    int duration = DEF_DURATION;
    int margin = DEF_INIT_MARGIN;
    TestType testType = TestType.ITERATIONS;
    TestMethod testMethod = TestMethod.REGULAR;
    boolean cpuFreqF;
    boolean noPeak;
    boolean duplex;
    boolean useEvent;
    int eqNum;
    boolean useEqNum;
    boolean reportGbits;
    /** --use-srq (SEND tests): receives go to one shared receive queue. */
    boolean useSrq;
    Output output = Output.FULL;
    boolean cpuUtil;
    boolean cpuUtilEnabled; // cpu_util_data.enable: --cpu_util in -D mode
    boolean outJson;
    String outJsonFile = DEFAULT_JSON_FILE_NAME;
    boolean useOldPostSend;
    boolean performWarmUp;
    int pkeyIndex;
    int trafficClass;
    int dlid;
    boolean ipv6;
    LinkType forceLink;
    String sourceIp;
    boolean mrPerQp;
    int waitDestroy;
    boolean isLimitBw;
    double limitBw;
    boolean isLimitMsgRate;
    double limitMsgRate;
    int latencyGap;
    boolean histogram;
    boolean unsorted;
    boolean reportBoth;
    boolean reversed;
    boolean disablePcieRelaxed;
    int tos = DEF_TOS;
    /** -R ({@code work_rdma_cm}): the test's QPs are made and connected by rdma_cm. Implies {@link #commRdmaCm}. */
    boolean rdmaCm;
    /** -z ({@code use_rdma_cm}): the exchange runs over an rdma_cm connection instead of TCP. */
    boolean commRdmaCm;
    /** --retry_count: rdma_cm's retry_count (and rnr_retry_count of the test's connections); perftest's 7. */
    int retryCount = DEF_RETRY_COUNT;
    int hopLimit = DEF_HOP_LIMIT;
    String servername;
    Machine machine = Machine.SERVER;

    // panverbs extensions (never sent on the wire)
    boolean loopback;
    /** {@code --direct_wqe} (panverbs only): mlx5 Direct WQE posting and direct send-CQ polling. */
    boolean directWqe;
    /** --odp: register the buffers with IBV_ACCESS_ON_DEMAND after checking the device's ODP capabilities. */
    boolean useOdp;
    int timeoutSeconds = 60;
    boolean debug;
    /** {@code --jit_warmup=N} (panverbs only): iterations of the private warm-up pair; -1 = automatic, 0 = none. */
    int jitWarmup = -1;
    /** A side of the JIT warm-up's pair ({@link Warmup#pairSide}): its peer watch rehearses a long wait. */
    boolean jitRehearsal;

    // filled in after the device is opened and the peer's values are known
    LinkType linkType;
    int currMtu;           // enum ibv_mtu value 1..5
    int cycleBuffer = 4096;
    int cacheLineSize = 64;
    String transport = "IB";

    PerftestParameters(PerftestTest test) {
        this.test = test;
        this.size = test.defaultSize();
        this.iters = test.defaultIters();
        this.txDepth = test.defaultTxDepth();
        this.rxDepth = test.verb() == PerftestTest.Verb.SEND ? DEF_RX_SEND : DEF_RX_RDMA;
    }

    PerftestTest.Verb verb() {
        return test.verb();
    }

    boolean isBw() {
        return test.isBw();
    }

    boolean isClient() {
        return machine == Machine.CLIENT;
    }

    boolean isServer() {
        return machine == Machine.SERVER;
    }

    /**
     * Whether this side creates the shared receive queue ({@code srq_exists}): --use-srq in a latency test, on the
     * server of a BW test, or with -b.
     */
    boolean srqExists() {
        return useSrq && (!isBw() || isServer() || duplex);
    }

    /** Receives posted per QP before the run: rx-depth, split over the QPs when they share an SRQ. */
    int recvPerQp() {
        return useSrq ? rxDepth / numQps : rxDepth;
    }

    boolean usesGid() {
        return gidIndex != DEF_GID_INDEX;
    }

    /** MTU in bytes of the negotiated {@code enum ibv_mtu} ({@code MTU_SIZE}). */
    long mtuBytes() {
        return 1L << (7 + currMtu);
    }

    /** {@code BUFF_SIZE(size, cycle_buffer)}: at least one page per QP and direction. */
    long buffSize() {
        return Math.max(size, cycleBuffer);
    }

    /** A field-by-field copy (every field is a primitive, an enum or a String). */
    PerftestParameters copy() {
        try {
            return (PerftestParameters) clone();
        } catch (CloneNotSupportedException e) {
            throw new AssertionError(e);
        }
    }
}
