package dev.panverbs.core.cm;

import dev.panverbs.bindings.Errno;
import dev.panverbs.core.VerbsException;

/**
 * A synchronous rdma_cm step ({@link CmId#resolve}, {@link CmId#connect(ConnectionParameters, java.time.Duration)},
 * {@link CmId#await}) received an event other than the one it waits for: an error event (ADDR_ERROR, ROUTE_ERROR,
 * UNREACHABLE, CONNECT_ERROR; REJECTED is {@link ConnectionRejectedException}), or the peer disconnecting. The
 * event is already acknowledged; {@link #event()} is its copy.
 */
public class CmEventException extends VerbsException {
    private static final long serialVersionUID = 1L;

    private final transient CmEvent event;

    CmEventException(String call, CmEvent event, String message) {
        super(call, message);
        this.event = event;
    }

    /** The event received. */
    public CmEvent event() {
        return event;
    }

    static CmEventException of(String call, CmEventType expected, CmEvent e) {
        if (e.type() == CmEventType.REJECTED) {
            return new ConnectionRejectedException(call, e);
        }
        String why = switch (e.type()) {
            case ADDR_ERROR -> "the address could not be resolved (no route to it, or no neighbour answered in time)";
            case ROUTE_ERROR -> "no route to the peer could be resolved";
            case UNREACHABLE -> "the peer did not answer the connection request in time, or is not reachable";
            case CONNECT_ERROR -> "the connection could not be established";
            case DISCONNECTED -> "the peer disconnected";
            case DEVICE_REMOVAL -> "the RDMA device was removed";
            default -> "an unexpected event arrived";
        };
        String status = e.status() < 0 ? ", status " + Errno.describe(e.status()) : e.status() != 0
                ? ", status " + e.status() : "";
        return new CmEventException(call, e, "expected " + expected + ", got " + e.type() + status + ": " + why);
    }
}
