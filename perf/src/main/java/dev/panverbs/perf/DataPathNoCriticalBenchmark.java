package dev.panverbs.perf;

import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * {@link DataPathBenchmark} with the provider slots (post, poll, {@code ibv_wr_*}, CQ-ex polling) linked as plain
 * downcalls, without {@code Linker.Option.critical(false)} (system property
 * {@code dev.panverbs.bindings.noCritical=true}, read once by the bindings): what the option buys on each path.
 * The C baselines and {@code downcallEmpty*} do not depend on the property and serve as controls.
 */
@State(Scope.Thread)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Ddev.panverbs.bindings.noCritical=true"})
public class DataPathNoCriticalBenchmark extends DataPathBenchmark {}
