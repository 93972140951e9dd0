package dev.panverbs.core.cm;

/**
 * The peer rejected the connection (a REJECTED event): its application called {@code rdma_reject}
 * ({@link #reason()} 28, consumer reject, with its {@link #privateData()}), or no ID listens on that port there
 * (reason 8, invalid service ID).
 */
public final class ConnectionRejectedException extends CmEventException {
    private static final long serialVersionUID = 1L;

    /** IB CM reject reason "invalid service ID": nothing listens on that port. */
    public static final int REASON_NO_LISTENER = 8;
    /** IB CM reject reason "consumer defined": the peer's application rejected ({@code rdma_reject}). */
    public static final int REASON_CONSUMER = 28;

    ConnectionRejectedException(String call, CmEvent e) {
        super(call, e, "the peer rejected the connection (IB CM reject reason " + e.status()
                + (e.status() == REASON_NO_LISTENER ? ": nothing listens on that port"
                        : e.status() == REASON_CONSUMER ? ": its application rejected it" : "") + ")");
    }

    /** The IB CM reject reason ({@code rdma_cm_event.status}). */
    public int reason() {
        return event().status();
    }

    /** The private data the peer passed to {@code rdma_reject} (as carried by the REJ: padded by the CM). */
    public byte[] privateData() {
        return event().privateData();
    }
}
