package dev.panverbs.bindings.abi;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Every function jextract bound in {@code verbs_h}, {@code mlx5dv_h} and {@code rdma_cma_h} resolves through
 * {@code NativeLibraries.LOOKUP} in the installed libibverbs.so.1 / libmlx5.so.1 / librdmacm.so.1 (each {@code X$address()}
 * links its symbol). A symbol routed to the wrong library fails here rather than with a
 * {@code NoClassDefFoundError} in a user's first call.
 */
class GeneratedSymbolsTest {

    @Test
    void everyBoundFunctionResolves() {
        List<String> unresolved = new ArrayList<>();
        int resolved = 0;
        for (String pkg : AbiConformanceTest.PACKAGES) {
            for (Class<?> header : AbiModel.topLevelClasses(pkg)) {
                if (!header.getSimpleName().endsWith("_h")) {
                    continue;
                }
                for (Method m : header.getMethods()) {
                    if (Modifier.isStatic(m.getModifiers()) && m.getName().endsWith("$address")
                            && m.getParameterCount() == 0) {
                        try {
                            m.invoke(null);
                            resolved++;
                        } catch (InvocationTargetException | ExceptionInInitializerError | IllegalAccessException e) {
                            unresolved.add(header.getSimpleName() + "." + m.getName().replace("$address", "")
                                    + " (" + rootCause(e) + ")");
                        }
                    }
                }
            }
        }
        assertThat(unresolved).as("functions that do not resolve through NativeLibraries.LOOKUP "
                + "(install libibverbs1 and ibverbs-providers; or the symbol is routed to the wrong library)").isEmpty();
        // rdma-core 44: verbs.h + mlx5dv.h declare 195 extern functions, rdma_cma.h 38 more, all exported
        assertThat(resolved).isGreaterThanOrEqualTo(195 + 38);
        System.out.printf("Symbols: %d functions bound by jextract resolve in libibverbs/libmlx5/librdmacm%n", resolved);
    }

    private static String rootCause(Throwable t) {
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t.toString();
    }
}
