package dev.panverbs.core;

/**
 * An asynchronous event ({@code struct ibv_async_event}, {@code ibv_get_async_event(3)}), copied out and
 * already acknowledged ({@code ibv_ack_async_event}), so it never blocks the destruction of the object it
 * names.
 *
 * @param type    what happened
 * @param portNum the port, for {@link AsyncEventType.Element#PORT} events; 0 otherwise
 * @param element the Java object the event concerns (a {@code QueuePair}, {@code CompletionQueue},
 *                {@code SharedReceiveQueue} or work queue of the context), or {@code null} for port and device
 *                events, or when the object was not created through this library
 * @param qpNum   the QP number for {@link AsyncEventType.Element#QP} events (read while the QP was alive);
 *                -1 otherwise
 */
public record AsyncEvent(AsyncEventType type, int portNum, Object element, int qpNum) {

    @Override
    public String toString() {
        return switch (type.element()) {
            case PORT -> type + " on port " + portNum;
            case QP -> type + " on QP " + qpNum + (element == null ? "" : " (" + element + ")");
            case DEVICE -> type.toString();
            default -> type + (element == null ? "" : " on " + element);
        };
    }
}
