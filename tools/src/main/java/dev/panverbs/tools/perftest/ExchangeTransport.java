package dev.panverbs.tools.perftest;

/**
 * The path perftest's fixed-size, symmetric messages travel on ({@code struct perftest_comm}): the TCP socket
 * ({@link ExchangeChannel}, "Data ex. method : Ethernet") or, with -R/-z, an RC connection made by rdma_cm that
 * carries each message as one SEND ({@link CmExchangeChannel}, "Data ex. method : rdma_cm"). In both, the client
 * writes first and then reads, the server reads and then writes: that framing is here, each path's
 * {@link #send} and {@link #receive} in its class.
 */
abstract class ExchangeTransport implements AutoCloseable {
    /** The side that writes first. */
    protected final boolean client;
    protected final long defaultTimeoutMillis;

    ExchangeTransport(boolean client, long defaultTimeoutMillis) {
        this.client = client;
        this.defaultTimeoutMillis = defaultTimeoutMillis;
    }

    final boolean isClient() {
        return client;
    }

    final long defaultTimeoutMillis() {
        return defaultTimeoutMillis;
    }

    /** Whether key messages travel as the binary {@code struct pingpong_dest} ({@link CmKeyMessage}), not as hex text. */
    abstract boolean binaryKeys();

    /**
     * One symmetric exchange: sends {@code mine}, receives exactly {@code theirSize} bytes within the default
     * timeout. {@code step} names the exchange in error messages ("version", "QP 0 address", ...).
     */
    final byte[] exchange(byte[] mine, int theirSize, String step) {
        return exchange(mine, theirSize, step, defaultTimeoutMillis);
    }

    /** As {@link #exchange(byte[], int, String)} with an explicit deadline for the peer's answer. */
    final byte[] exchange(byte[] mine, int theirSize, String step, long timeoutMillis) {
        if (client) {
            send(mine, step);
            return receive(theirSize, step, timeoutMillis);
        }
        byte[] theirs = receive(theirSize, step, timeoutMillis);
        send(mine, step);
        return theirs;
    }

    /** Sends one whole message; {@code step} names the exchange in the error. */
    abstract void send(byte[] message, String step);

    /** Receives exactly {@code size} bytes within {@code timeoutMillis}. */
    abstract byte[] receive(int size, String step, long timeoutMillis);

    /**
     * Whether the peer has closed its end (EOF or reset), looked at without waiting and without losing any
     * byte it sent; used by {@link PeerWatch} while a run waits on the peer. False when it cannot tell.
     */
    boolean peerClosed() {
        return false;
    }

    /** Ends the exchange as {@code ctx_close_connection} does after its last key message. */
    abstract void sendDoneAndClose();

    @Override
    public abstract void close();
}
