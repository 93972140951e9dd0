package dev.panverbs.bindings;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Reads and writes at absolute native addresses, for the inline twins that follow C pointers
 * ({@code qp->context->ops.post_send}) whose segments arrive with no usable size (a zero-length segment read
 * from a struct field, or jextract's unbounded one). One segment spans the address space, so a read
 * allocates nothing. Callers check pointers for NULL first: a read at a small address crashes the JVM.
 */
public final class NativeMemory {

    private static final MemorySegment ALL = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    private NativeMemory() {}

    /** The pointer stored at {@code address}, as a zero-length segment. */
    public static MemorySegment pointer(long address) {
        return ALL.get(ValueLayout.ADDRESS, address);
    }

    public static void pointer(long address, MemorySegment value) {
        ALL.set(ValueLayout.ADDRESS, address, value);
    }

    public static long int64(long address) {
        return ALL.get(ValueLayout.JAVA_LONG, address);
    }

    public static int int32(long address) {
        return ALL.get(ValueLayout.JAVA_INT, address);
    }

    public static void int32(long address, int value) {
        ALL.set(ValueLayout.JAVA_INT, address, value);
    }

    /** {@code memset(address, 0, length)}. */
    public static void zero(long address, long length) {
        ALL.asSlice(address, length).fill((byte) 0);
    }

    /**
     * {@code pointer.address()}, or an {@link IllegalArgumentException} naming the verb and argument where C
     * would dereference NULL.
     */
    public static long nonNull(MemorySegment pointer, String verb, String argument) {
        long address = pointer.address();
        if (address == 0L) {
            throw nullArgument(verb, argument);
        }
        return address;
    }

    private static IllegalArgumentException nullArgument(String verb, String argument) {
        return new IllegalArgumentException(verb + ": " + argument + " is NULL");
    }
}
