/**
 * The idiomatic verbs API: one type per verbs object ({@code Device}, {@code Context},
 * {@code ProtectionDomain}, {@code MemoryRegion}, {@code CompletionQueue}, {@code QueuePair}, ...), each
 * {@link java.lang.AutoCloseable} and owned by its parent, mapping one-to-one onto the libibverbs calls
 * named in its Javadoc.
 */
package dev.panverbs.core;
