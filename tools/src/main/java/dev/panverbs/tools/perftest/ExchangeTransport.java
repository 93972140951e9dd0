package dev.panverbs.tools.perftest;

/**
 * The path perftest's fixed-size, symmetric messages travel on ({@code struct perftest_comm}): the TCP socket
 * ({@link ExchangeChannel}, "Data ex. method : Ethernet") or, with -R/-z, an RC connection made by rdma_cm that
 * carries each message as one SEND ({@link CmExchangeChannel}, "Data ex. method : rdma_cm"). In both, the client
 * writes first and then reads, the server reads and then writes.
 */
interface ExchangeTransport extends AutoCloseable {

    boolean isClient();

    long defaultTimeoutMillis();

    /** Whether key messages travel as the binary {@code struct pingpong_dest} ({@link CmKeyMessage}), not as hex text. */
    boolean binaryKeys();

    /**
     * One symmetric exchange: sends {@code mine}, receives exactly {@code theirSize} bytes within the default
     * timeout. {@code step} names the exchange in error messages ("version", "QP 0 address", ...).
     */
    default byte[] exchange(byte[] mine, int theirSize, String step) {
        return exchange(mine, theirSize, step, defaultTimeoutMillis());
    }

    /** As {@link #exchange(byte[], int, String)} with an explicit deadline for the peer's answer. */
    byte[] exchange(byte[] mine, int theirSize, String step, long timeoutMillis);

    /** Ends the exchange as {@code ctx_close_connection} does after its last key message. */
    void sendDoneAndClose();

    @Override
    void close();
}
