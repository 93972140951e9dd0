package dev.panverbs.bindings;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.util.Optional;

/**
 * Loads {@code libibverbs.so.1}, {@code libmlx5.so.1} and {@code librdmacm.so.1} by soname (as the dynamic
 * linker would for a C program linked with {@code -libverbs -lmlx5 -lrdmacm}), lazily, on the first symbol looked
 * up. One class for all the native libraries of these bindings, so that the generated code has one lookup.
 *
 * <p>A missing library is reported as a {@link NativeLibraryException} that names the package to install,
 * on every use (not once, then {@code NoClassDefFoundError}). {@link #LOOKUP} is what the generated
 * {@code verbs_h}/{@code mlx5dv_h}/{@code rdma_cma_h} classes resolve their symbols through (see
 * {@code src-gen/regenerate.sh}).
 *
 * <p>The system properties {@value #IBVERBS_PROPERTY}, {@value #MLX5_PROPERTY} and {@value #RDMACM_PROPERTY} replace the soname with another
 * name or an absolute path, read once when the library is first needed: for an rdma-core installed outside the
 * linker's path, and for tests that need a library to be missing.
 */
public final class NativeLibraries {

    /** Soname of the verbs library (rdma-core). */
    public static final String IBVERBS_SONAME = "libibverbs.so.1";
    /** Soname of the mlx5 provider library, which exports the {@code mlx5dv_*} direct verbs. */
    public static final String MLX5_SONAME = "libmlx5.so.1";
    /** Soname of the RDMA connection manager library (rdma-core's librdmacm). */
    public static final String RDMACM_SONAME = "librdmacm.so.1";
    /** System property: the name or path to load instead of {@value #IBVERBS_SONAME}. */
    public static final String IBVERBS_PROPERTY = "dev.panverbs.bindings.libibverbs";
    /** System property: the name or path to load instead of {@value #MLX5_SONAME}. */
    public static final String MLX5_PROPERTY = "dev.panverbs.bindings.libmlx5";
    /** System property: the name or path to load instead of {@value #RDMACM_SONAME}. */
    public static final String RDMACM_PROPERTY = "dev.panverbs.bindings.librdmacm";

    private static final String IBVERBS_HINT =
            "install it: Debian/Ubuntu 'apt-get install libibverbs1 ibverbs-providers', RHEL/Fedora 'dnf install libibverbs'";
    private static final String RDMACM_HINT =
            "install it: Debian/Ubuntu 'apt-get install librdmacm1', RHEL/Fedora 'dnf install librdmacm'";
    private static final String MLX5_HINT =
            "install it: Debian/Ubuntu 'apt-get install ibverbs-providers', RHEL/Fedora 'dnf install libibverbs' (it carries libmlx5)";

    /**
     * Resolves {@code mlx5dv_*} symbols (and the size-taking {@code _mlx5dv_query_port},
     * {@code _mlx5dv_mkey_check} behind mlx5dv.h inlines) in libmlx5 and everything else in libibverbs. Never throws at
     * creation; a lookup throws {@link NativeLibraryException} if the library cannot be loaded.
     */
    public static final SymbolLookup LOOKUP = NativeLibraries::find;

    private NativeLibraries() {}

    private static Optional<MemorySegment> find(String name) {
        if (name.startsWith("rdma_")) {
            return rdmacm().find(name);
        }
        return name.startsWith("mlx5dv_") || name.startsWith("_mlx5dv_") ? mlx5().find(name) : ibverbs().find(name);
    }

    /** The librdmacm lookup; throws {@link NativeLibraryException} naming the package when it is missing. */
    public static SymbolLookup rdmacm() {
        return Rdmacm.LOOKUP.orThrow();
    }

    /** Resolves a librdmacm function, or throws naming the symbol and the library version needed. */
    public static MemorySegment rdmacmSymbol(String name) {
        return Rdmacm.LOOKUP.symbol(name, "rdma-core is older than 44; upgrade librdmacm1");
    }

    /** The libibverbs lookup; throws {@link NativeLibraryException} naming the package when it is missing. */
    public static SymbolLookup ibverbs() {
        return Ibverbs.LOOKUP.orThrow();
    }

    /** The libmlx5 lookup; throws {@link NativeLibraryException} naming the package when it is missing. */
    public static SymbolLookup mlx5() {
        return Mlx5.LOOKUP.orThrow();
    }

    /** Whether libmlx5 can be loaded (the mlx5 provider is installed); never throws. */
    public static boolean mlx5Available() {
        return Mlx5.LOOKUP.lookup != null;
    }

    /** Resolves a libibverbs function, or throws naming the symbol and the library version needed. */
    public static MemorySegment ibverbsSymbol(String name) {
        return Ibverbs.LOOKUP.symbol(name, "rdma-core is older than 44; upgrade libibverbs1");
    }

    /** Resolves a libmlx5 function, or throws naming the symbol. */
    public static MemorySegment mlx5Symbol(String name) {
        return Mlx5.LOOKUP.symbol(name, "rdma-core is older than 44; upgrade ibverbs-providers");
    }

    /** A library load attempt; package-private so that a test can load a missing soname. */
    record Loaded(SymbolLookup lookup, String library, String problem, String hint) {
        static Loaded load(String library, String hint) {
            try {
                // global arena: the libraries stay mapped for the life of the JVM, as for a C program
                return new Loaded(SymbolLookup.libraryLookup(library, Arena.global()), library, null, hint);
            } catch (IllegalArgumentException | IllegalCallerException e) {
                return new Loaded(null, library, library + " cannot be loaded (" + e.getMessage() + ")", hint);
            }
        }

        /** Loads the library named by {@code property}, or {@code soname} when it is not set. */
        static Loaded load(String property, String soname, String hint) {
            String name = System.getProperty(property, "");
            return load(name.isBlank() ? soname : name.strip(), hint);
        }

        SymbolLookup orThrow() {
            if (lookup == null) {
                throw new NativeLibraryException(library, problem, hint);
            }
            return lookup;
        }

        MemorySegment symbol(String name, String upgrade) {
            return orThrow().find(name).orElseThrow(() -> new NativeLibraryException(library,
                    library + " has no symbol " + name, upgrade));
        }
    }

    private static final class Ibverbs {
        static final Loaded LOOKUP = Loaded.load(IBVERBS_PROPERTY, IBVERBS_SONAME, IBVERBS_HINT);
    }

    private static final class Rdmacm {
        static final Loaded LOOKUP = Loaded.load(RDMACM_PROPERTY, RDMACM_SONAME, RDMACM_HINT);
    }

    private static final class Mlx5 {
        static final Loaded LOOKUP = Loaded.load(MLX5_PROPERTY, MLX5_SONAME, MLX5_HINT);
    }
}
