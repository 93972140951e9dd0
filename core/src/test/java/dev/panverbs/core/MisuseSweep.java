package dev.panverbs.core;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.reflect.Array;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * Calls every public instance method of an object with one argument at a time set to a boundary or misuse value
 * (0, -1, MIN/MAX, a heap segment, a segment of a closed arena, {@code NULL}, an empty segment, a region of another PD
 * or closed, null) and the others benign, and collects each answer that {@link MisuseFuzzHostTest#misfit} does not
 * accept: an undocumented exception, one escaping from the JDK, or a message that names no verb. Used by
 * {@link MisuseSweepHostTest} and the mlx5 direct-queue sweep.
 */
public final class MisuseSweep {
    private final MemoryRegion good;
    private final MemoryRegion otherPd;
    private final MemoryRegion closed;
    private final Set<String> misfits = new TreeSet<>();
    private final List<String> verbs = new ArrayList<>();
    private int calls;
    private final java.util.Map<Class<?>, Object[]> extra = new java.util.HashMap<>();
    private final Arena closedArena = Arena.ofConfined();
    private final MemorySegment closedSegment = closedArena.allocate(64);

    /** @param good a region of the objects' PD; {@code otherPd} of another PD; {@code closed} a closed one */
    public MisuseSweep(MemoryRegion good, MemoryRegion otherPd, MemoryRegion closed) {
        this.good = good;
        this.otherPd = otherPd;
        this.closed = closed;
        closedArena.close();
    }

    /** Accepts messages that name {@code verb} (the mlx5 direct paths: "mlx5 Direct WQE post", ...). */
    public MisuseSweep alsoNaming(String verb) {
        verbs.add(verb);
        return this;
    }

    /** For parameters of {@code type}: {@code benign} and the misuse values (a closed handle, one of another PD). */
    public MisuseSweep with(Class<?> type, Object benign, Object... misuses) {
        Object[] values = new Object[misuses.length + 2];
        values[0] = benign;
        System.arraycopy(misuses, 0, values, 1, misuses.length);
        extra.put(type, values); // the last slot stays null: null is always a misuse
        return this;
    }

    /** As {@link #with}, with a fresh benign value per call (an open batch, ...). */
    public MisuseSweep withFresh(Class<?> type, Supplier<?> benign, Object... misuses) {
        return with(type, new Fresh(benign), misuses);
    }

    private record Fresh(Supplier<?> value) {
        @Override
        public String toString() {
            return "(fresh)";
        }
    }

    /** How many calls the sweeps made. */
    public int calls() {
        return calls;
    }

    /** What was not acceptable, one line each: the call, its arguments, why, and where it was thrown. */
    public Set<String> misfits() {
        return misfits;
    }

    /**
     * Sweeps the public methods of the object {@code target} supplies (a fresh or reset one per call), except
     * {@code skip}; {@code after} runs after each call (to reset what the call opened).
     */
    public void sweep(String label, Supplier<?> target, Set<String> skip, Runnable after) {
        Object first = target.get();
        after.run();
        for (Method m : first.getClass().getMethods()) {
            if (m.getDeclaringClass() == Object.class || Modifier.isStatic(m.getModifiers())
                    || m.getName().equals("close") || skip.contains(m.getName())) {
                continue;
            }
            for (Object[] a : argumentSets(m.getParameterTypes())) {
                Object o = target.get();
                call(label, m.getName(), a, () -> m.invoke(o, a));
                after.run();
            }
        }
    }

    /**
     * Sweeps the public static methods and public constructors {@code type} declares (factories, builders, records),
     * except {@code skip} ("new" for the constructors); {@code after} runs after each call.
     */
    public void sweepStatic(Class<?> type, Set<String> skip, Runnable after) {
        String label = type.getSimpleName();
        for (Method m : type.getDeclaredMethods()) {
            if (!Modifier.isStatic(m.getModifiers()) || !Modifier.isPublic(m.getModifiers()) || m.isSynthetic()
                    || skip.contains(m.getName())) {
                continue;
            }
            for (Object[] a : argumentSets(m.getParameterTypes())) {
                call(label, m.getName(), a, () -> m.invoke(null, a));
                after.run();
            }
        }
        if (skip.contains("new")) {
            return;
        }
        for (Constructor<?> c : type.getConstructors()) {
            for (Object[] a : argumentSets(c.getParameterTypes())) {
                call(label, "new", a, () -> c.newInstance(a));
                after.run();
            }
        }
    }

    /** The benign arguments, then each with one argument set to each misuse value of its type. */
    private List<Object[]> argumentSets(Class<?>[] ps) {
        Object[] base = new Object[ps.length];
        for (int i = 0; i < ps.length; i++) {
            base[i] = benign(ps[i]);
        }
        List<Object[]> sets = new ArrayList<>();
        sets.add(base);
        for (int i = 0; i < ps.length; i++) {
            for (Object v : misuse(ps[i])) {
                Object[] a = base.clone();
                a[i] = v;
                sets.add(a);
            }
        }
        return sets;
    }

    private interface Invocation {
        void run() throws ReflectiveOperationException;
    }

    private void call(String label, String name, Object[] a, Invocation invocation) {
        calls++;
        try {
            for (int i = 0; i < a.length; i++) {
                if (a[i] instanceof Fresh f) {
                    a[i] = f.value().get();
                }
            }
            invocation.run();
        } catch (IllegalAccessException | InstantiationException e) {
            throw new AssertionError(e);
        } catch (InvocationTargetException e) {
            Throwable t = e.getCause();
            boolean nullArgument = Arrays.asList(a).contains(null);
            String why;
            if (!nullArgument && t instanceof NullPointerException && holdsNull(a)) {
                // a null element of an array or list: Java's NPE, but it must name the verb (and so the element)
                why = namesVerb(t.getMessage()) ? null : "a null element answered by an NPE that names no verb";
            } else {
                why = MisuseFuzzHostTest.misfit(t, nullArgument);
                if (why != null && why.equals("a message that names no verb") && namesVerb(t.getMessage())) {
                    why = null;
                }
            }
            if (why != null) {
                StackTraceElement at = t.getStackTrace().length == 0 ? null : t.getStackTrace()[0];
                misfits.add(label + "." + name + Arrays.toString(a) + ": " + why + ": " + t + " at " + at);
            }
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    private boolean namesVerb(String message) {
        return message != null && (message.contains("ibv_") || verbs.stream().anyMatch(message::contains));
    }

    private static boolean holdsNull(Object[] args) {
        for (Object x : args) {
            if (x instanceof Object[] array && Arrays.asList(array).contains(null)
                    || x instanceof List<?> list && list.stream().anyMatch(java.util.Objects::isNull)) {
                return true;
            }
        }
        return false;
    }

    private Object benign(Class<?> t) {
        if (extra.containsKey(t)) {
            return extra.get(t)[0];
        } else if (t == int.class) {
            return 1;
        } else if (t == long.class) {
            return 0L;
        } else if (t == short.class) {
            return (short) 0;
        } else if (t == byte.class) {
            return (byte) 0;
        } else if (t == boolean.class) {
            return false;
        } else if (t == double.class) {
            return 0.0;
        } else if (t == MemorySegment.class) {
            return good.buffer().asSlice(0, 64);
        } else if (t.isAssignableFrom(MemoryRegion.class)) {
            return good;
        } else if (t.isEnum()) {
            return t.getEnumConstants()[0];
        } else if (t == Set.class) {
            return Set.of();
        } else if (t == String.class) {
            return "x";
        } else if (t.isArray()) {
            Object array = Array.newInstance(t.getComponentType(), 1);
            if (t.getComponentType() == MemorySegment.class) {
                Array.set(array, 0, good.buffer().asSlice(0, 8));
            } else if (t.getComponentType().isAssignableFrom(MemoryRegion.class)) {
                Array.set(array, 0, good);
            } else if (t.getComponentType() == int.class) {
                Array.set(array, 0, 8);
            }
            return array;
        }
        return null;
    }

    private Object[] misuse(Class<?> t) {
        if (extra.containsKey(t)) {
            Object[] values = extra.get(t);
            return Arrays.copyOfRange(values, 1, values.length);
        } else if (t == int.class) {
            return new Object[] {0, -1, Integer.MAX_VALUE, Integer.MIN_VALUE};
        } else if (t == long.class) {
            return new Object[] {-1L, Long.MAX_VALUE, Long.MIN_VALUE};
        } else if (t == MemorySegment.class) {
            return new Object[] {MemorySegment.ofArray(new byte[64]), closedSegment, MemorySegment.NULL,
                good.buffer().asSlice(0, 0), null};
        } else if (t.isAssignableFrom(MemoryRegion.class)) {
            return new Object[] {otherPd, closed, null};
        } else if (t.isArray()) {
            Object withNull = Array.newInstance(t.getComponentType(), 1);
            return t.getComponentType().isPrimitive() ? new Object[] {Array.newInstance(t.getComponentType(), 0), null}
                    : new Object[] {Array.newInstance(t.getComponentType(), 0), withNull, null};
        } else if (t.isPrimitive()) {
            return new Object[0];
        }
        return new Object[] {null};
    }
}
