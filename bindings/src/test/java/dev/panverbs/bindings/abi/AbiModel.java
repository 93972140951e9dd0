package dev.panverbs.bindings.abi;

import java.io.IOException;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.PaddingLayout;
import java.lang.foreign.SequenceLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.UnionLayout;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.stream.Stream;

/**
 * What the generated bindings claim about the C ABI, read by reflection: every top-level class of the
 * given packages with a static {@code layout()} returning a {@link GroupLayout} (a struct or union), every
 * named member reachable from it (nested and anonymous members included), and every constant accessor
 * (enum constant or {@code #define}) of the header classes ({@code verbs_h}, {@code mlx5dv_h} and their
 * superclasses).
 *
 * <p>Member paths are C member designators usable in {@code offsetof}: jextract names anonymous struct and
 * union members {@code $anon$LINE:COL}; C reaches their members directly, so such a level adds nothing
 * to the path. Elements of arrays of aggregates are checked through element {@code [0]}.
 */
public final class AbiModel {

    /** A struct or union type; {@code cType} is how C spells it ({@code struct ibv_qp}, {@code pthread_mutex_t}). */
    public record Type(String javaName, String cType, boolean union, long size, long align,
                       List<Field> fields, List<Padding> unexplainedPadding) {}

    /**
     * A named member. {@code flexible}: a zero-length array (C flexible array member or GNU {@code [0]}),
     * whose {@code sizeof} C cannot take; only its offset and alignment are compared. {@code aggregate}: the
     * member is itself a struct or union (its members follow as fields of their own).
     */
    public record Field(String owner, String path, long offset, long size, long align, boolean flexible,
                        boolean aggregate) {
        public String describe() {
            return owner + "." + path;
        }
    }

    /**
     * Padding inside a jextract layout that alignment does not explain: jextract turns bit-fields into
     * padding (offsetof cannot name a bit-field either), so such gaps are reported, not guessed at.
     */
    public record Padding(String where, long offset, long size) {}

    /** The Java type a constant accessor returns. */
    public enum ConstantKind { INT, LONG, POINTER }

    /** An enum constant or {@code #define}, as the header class returns it. */
    public record Constant(String header, String name, ConstantKind kind, long value) {
        public String describe() {
            return header + "." + name;
        }
    }

    private final List<Type> types;
    private final List<Constant> constants;

    public AbiModel(List<Type> types, List<Constant> constants) {
        this.types = List.copyOf(types);
        this.constants = List.copyOf(constants);
    }

    public List<Type> types() {
        return types;
    }

    public List<Constant> constants() {
        return constants;
    }

    /** All fields of all types, in a stable order (the ids the C program prints). */
    public List<Field> fields() {
        return types.stream().flatMap(t -> t.fields().stream()).toList();
    }

    /** Scans the given packages of the class path (directories or jars). */
    public static AbiModel scan(String... packages) {
        List<Type> types = new ArrayList<>();
        List<Constant> constants = new ArrayList<>();
        for (String pkg : packages) {
            for (Class<?> c : topLevelClasses(pkg)) {
                GroupLayout layout = layoutOf(c);
                if (layout != null) {
                    types.add(type(c, layout));
                } else if (c.getSimpleName().endsWith("_h")) {
                    constants.addAll(constantsOf(c));
                }
            }
        }
        return new AbiModel(types, constants);
    }

    /** Builds the model of one type from a layout, as the scan does; public so tests can feed wrong layouts. */
    public static Type type(String javaName, String cType, GroupLayout layout) {
        List<Field> fields = new ArrayList<>();
        List<Padding> padding = new ArrayList<>();
        Type t = new Type(javaName, cType, layout instanceof UnionLayout, layout.byteSize(), layout.byteAlignment(),
                fields, padding);
        walk(t, layout, 0, "", fields, padding);
        return t;
    }

    private static Type type(Class<?> c, GroupLayout layout) {
        return type(c.getName(), cSpelling(c, layout), layout);
    }

    /**
     * How C names the type: a jextract class extending another layout class is a typedef alias; a layout
     * named like its class is a tagged {@code struct}/{@code union}; a layout named {@code $anon$...} is an
     * anonymous aggregate reached through its typedef name.
     */
    static String cSpelling(Class<?> c, GroupLayout layout) {
        boolean alias = layoutOf(c.getSuperclass()) != null;
        String tagged = layout.name().orElse("");
        if (!alias && tagged.equals(c.getSimpleName())) {
            return (layout instanceof UnionLayout ? "union " : "struct ") + tagged;
        }
        return c.getSimpleName();
    }

    private static void walk(Type t, GroupLayout g, long base, String prefix, List<Field> fields, List<Padding> pads) {
        List<MemoryLayout> members = g.memberLayouts();
        long offset = 0;
        for (int i = 0; i < members.size(); i++) {
            MemoryLayout m = members.get(i);
            long at = base + (g instanceof StructLayout ? offset : 0);
            if (m instanceof PaddingLayout p) {
                if (!explainedByAlignment(g, members, i, offset)) {
                    pads.add(new Padding(t.cType() + (prefix.isEmpty() ? "" : "." + prefix), at, p.byteSize()));
                }
            } else {
                String name = m.name().orElse("");
                if (name.isEmpty() || name.startsWith("$anon$")) {
                    if (!(m instanceof GroupLayout anon)) {
                        throw new IllegalStateException(t.javaName() + ": unnamed non-aggregate member " + m);
                    }
                    walk(t, anon, at, prefix, fields, pads);
                } else {
                    String path = prefix.isEmpty() ? name : prefix + "." + name;
                    member(t, m, at, path, fields, pads);
                }
            }
            offset += m.byteSize();
        }
    }

    private static void member(Type t, MemoryLayout m, long at, String path, List<Field> fields, List<Padding> pads) {
        boolean flexible = m instanceof SequenceLayout s && s.elementCount() == 0;
        fields.add(new Field(t.cType(), path, at, m.byteSize(), m.byteAlignment(), flexible, m instanceof GroupLayout));
        if (m instanceof GroupLayout g) {
            walk(t, g, at, path, fields, pads);
        } else if (m instanceof SequenceLayout s && s.elementCount() > 0
                && (s.elementLayout() instanceof GroupLayout || s.elementLayout() instanceof SequenceLayout)) {
            member(t, s.elementLayout(), at, path + "[0]", fields, pads);
        }
    }

    /**
     * Whether the padding at member index {@code i} is what alignment demands: in a struct, the gap before the
     * next member (or the tail gap up to the struct's alignment); in a union, the rounding of the largest
     * member up to the union's alignment.
     */
    private static boolean explainedByAlignment(GroupLayout g, List<MemoryLayout> members, int i, long offset) {
        long size = members.get(i).byteSize();
        if (g instanceof UnionLayout) {
            long largest = members.stream().filter(x -> !(x instanceof PaddingLayout))
                    .mapToLong(MemoryLayout::byteSize).max().orElse(0);
            return size <= roundUp(largest, g.byteAlignment());
        }
        long align = i + 1 < members.size() ? members.get(i + 1).byteAlignment() : g.byteAlignment();
        return size == roundUp(offset, align) - offset;
    }

    private static long roundUp(long v, long align) {
        return (v + align - 1) / align * align;
    }

    static GroupLayout layoutOf(Class<?> c) {
        if (c == null || c == Object.class) {
            return null;
        }
        try {
            Method m = c.getMethod("layout");
            if (Modifier.isStatic(m.getModifiers()) && m.getParameterCount() == 0
                    && GroupLayout.class.isAssignableFrom(m.getReturnType())) {
                return (GroupLayout) m.invoke(null);
            }
            return null;
        } catch (NoSuchMethodException e) {
            return null;
        } catch (IllegalAccessException | InvocationTargetException e) {
            throw new IllegalStateException("cannot read " + c.getName() + ".layout()", e);
        }
    }

    /**
     * Constant accessors: public static no-argument methods without {@code $} in their name that are not
     * the getter of a function ({@code name$handle}) or a global variable ({@code name$segment}).
     */
    private static List<Constant> constantsOf(Class<?> header) {
        List<Constant> out = new ArrayList<>();
        for (Class<?> c = header; c != null && c != Object.class; c = c.getSuperclass()) {
            Set<String> names = new HashSet<>();
            for (Method m : c.getDeclaredMethods()) {
                names.add(m.getName());
            }
            List<Method> methods = Stream.of(c.getDeclaredMethods())
                    .filter(m -> Modifier.isPublic(m.getModifiers()) && Modifier.isStatic(m.getModifiers()))
                    .filter(m -> m.getParameterCount() == 0 && !m.getName().contains("$"))
                    .filter(m -> !names.contains(m.getName() + "$handle") && !names.contains(m.getName() + "$segment")
                            && !names.contains(m.getName() + "$address"))
                    .sorted(Comparator.comparing(Method::getName))
                    .toList();
            for (Method m : methods) {
                out.add(constant(header.getSimpleName(), m));
            }
        }
        return out;
    }

    private static Constant constant(String header, Method m) {
        try {
            Object v = m.invoke(null);
            return switch (v) {
                case Integer i -> new Constant(header, m.getName(), ConstantKind.INT, i);
                case Long l -> new Constant(header, m.getName(), ConstantKind.LONG, l);
                case MemorySegment s -> new Constant(header, m.getName(), ConstantKind.POINTER, s.address());
                default -> throw new IllegalStateException(header + "." + m.getName() + " returns "
                        + m.getReturnType() + ": the ABI test does not know how to check this constant type yet");
            };
        } catch (IllegalAccessException | InvocationTargetException e) {
            throw new IllegalStateException("cannot read " + header + "." + m.getName(), e);
        }
    }

    /** Top-level classes of a package on the class path, sorted by name. */
    static List<Class<?>> topLevelClasses(String pkg) {
        String dir = pkg.replace('.', '/');
        ClassLoader loader = AbiModel.class.getClassLoader();
        Set<String> names = new HashSet<>();
        try {
            Enumeration<URL> urls = loader.getResources(dir);
            while (urls.hasMoreElements()) {
                URL url = urls.nextElement();
                if (url.getProtocol().equals("file")) {
                    try (Stream<Path> files = Files.list(Path.of(url.toURI()))) {
                        files.map(p -> p.getFileName().toString()).filter(f -> f.endsWith(".class"))
                                .forEach(f -> names.add(f.substring(0, f.length() - 6)));
                    }
                } else if (url.openConnection() instanceof JarURLConnection jar) {
                    jar.getJarFile().stream().map(JarEntry::getName)
                            .filter(n -> n.startsWith(dir + "/") && n.endsWith(".class")
                                    && n.indexOf('/', dir.length() + 1) < 0)
                            .forEach(n -> names.add(n.substring(dir.length() + 1, n.length() - 6)));
                }
            }
        } catch (IOException | URISyntaxException e) {
            throw new IllegalStateException("cannot list package " + pkg, e);
        }
        List<Class<?>> classes = new ArrayList<>();
        for (String n : names) {
            try {
                Class<?> c = Class.forName(pkg + "." + n, false, loader);
                if (c.getEnclosingClass() == null) {
                    classes.add(c);
                }
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException(e);
            }
        }
        if (classes.isEmpty()) {
            throw new IllegalStateException("no classes of package " + pkg + " on the class path");
        }
        classes.sort(Comparator.comparing(Class::getName));
        return classes;
    }
}
