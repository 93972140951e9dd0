package dev.panverbs.tools.transport;

import java.util.ArrayList;
import java.util.List;

/**
 * The client's slots: slot {@code i} owns send buffer {@code i} (where the request is staged for the SEND)
 * and response slot {@code i} (where the server RDMA-writes the response). A slot is free again only when
 * <em>both</em> the local SEND has completed (before that the NIC may still read the send buffer) and the
 * response has been handed to its handler (before that the payload is still being read).
 *
 * <p>Each acquisition bumps the slot's generation, which is part of the request id: a response carrying a
 * stale or unknown id is a protocol error instead of a wrong answer delivered to a later call. Not
 * thread-safe: the client guards it with its lock.
 */
final class SlotTable {
    static final int SEND_PENDING = 1;
    static final int RESPONSE_PENDING = 2;

    private final int[] generation;
    private final int[] state;
    private final ResponseHandler[] handlers;
    private final int[] free;
    private int freeCount;

    SlotTable(int slots) {
        if (slots < 1 || slots > Immediate.MAX_SLOTS) {
            throw new IllegalArgumentException("slots must be 1.." + Immediate.MAX_SLOTS + ", got " + slots);
        }
        generation = new int[slots];
        state = new int[slots];
        handlers = new ResponseHandler[slots];
        free = new int[slots];
        for (int i = 0; i < slots; i++) {
            free[i] = slots - 1 - i; // hand out slot 0 first
        }
        freeCount = slots;
    }

    /**
     * Takes a free slot for a call ({@code handler != null}: a response is awaited) or a one-way message.
     *
     * @return the slot, or -1 when all are in use
     */
    int tryAcquire(ResponseHandler handler) {
        if (freeCount == 0) {
            return -1;
        }
        int slot = free[--freeCount];
        generation[slot] = (generation[slot] + 1) & Immediate.GENERATION_MASK;
        state[slot] = handler == null ? SEND_PENDING : SEND_PENDING | RESPONSE_PENDING;
        handlers[slot] = handler;
        return slot;
    }

    /** Gives back a slot whose SEND could not be posted. */
    void abort(int slot) {
        checkInUse(slot);
        release(slot);
    }

    int requestId(int slot) {
        return Immediate.requestId(slot, generation[slot]);
    }

    /** The SEND from {@code slot} completed; returns whether the slot is free again. */
    boolean sendCompleted(int slot) {
        checkInUse(slot);
        if ((state[slot] & SEND_PENDING) == 0) {
            throw new IllegalStateException("second send completion for slot " + slot);
        }
        state[slot] &= ~SEND_PENDING;
        if (state[slot] == 0) {
            release(slot);
            return true;
        }
        return false;
    }

    /**
     * A response for {@code requestId} arrived: validates the id and returns the slot; the handler is then
     * called, then {@link #responseHandled}. The slot stays in use in between.
     */
    int responseArrived(int requestId) {
        int slot = Immediate.slot(requestId);
        if (slot >= state.length || (state[slot] & RESPONSE_PENDING) == 0
                || generation[slot] != Immediate.generation(requestId)) {
            throw new RpcProtocolException("response for request id 0x" + Integer.toHexString(requestId)
                    + " (slot " + slot + ", generation " + Immediate.generation(requestId)
                    + ") which is not outstanding");
        }
        return slot;
    }

    ResponseHandler handler(int slot) {
        return handlers[slot];
    }

    /** The response of {@code slot} has been handled; returns whether the slot is free again. */
    boolean responseHandled(int slot) {
        state[slot] &= ~RESPONSE_PENDING;
        if (state[slot] == 0) {
            release(slot);
            return true;
        }
        return false;
    }

    /** Fails every outstanding call: returns their handlers and forgets them (the connection is gone). */
    List<ResponseHandler> drainHandlers() {
        List<ResponseHandler> out = new ArrayList<>();
        for (int i = 0; i < state.length; i++) {
            if ((state[i] & RESPONSE_PENDING) != 0 && handlers[i] != null) {
                out.add(handlers[i]);
            }
            state[i] &= ~RESPONSE_PENDING;
            handlers[i] = null;
        }
        return out;
    }

    /** Slots in use: calls awaiting a response or a send completion. */
    int inUse() {
        return state.length - freeCount;
    }

    int capacity() {
        return state.length;
    }

    private void checkInUse(int slot) {
        if (slot < 0 || slot >= state.length || state[slot] == 0) {
            throw new IllegalStateException("slot " + slot + " is not in use");
        }
    }

    private void release(int slot) {
        state[slot] = 0;
        handlers[slot] = null;
        free[freeCount++] = slot;
    }
}
