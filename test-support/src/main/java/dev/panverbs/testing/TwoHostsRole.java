package dev.panverbs.testing;

import org.junit.jupiter.api.Assumptions;

/**
 * The part a two-guest IT ({@code *TwoHostsIT}) plays, from what {@code testbed/run --two} sets in each guest:
 * {@code PANVERBS_ROLE} ({@code server} on guest A), {@code PANVERBS_PEER} (the other guest's address) and
 * {@code PANVERBS_ADDR} (this guest's). Java-only.
 *
 * @param role what {@code PANVERBS_ROLE} says: {@code server}, or the client role
 * @param peer the other guest's address
 * @param addr this guest's address
 */
public record TwoHostsRole(String role, String peer, String addr) {

    /** The role of this guest; outside a guest pair the test is skipped (it needs the other guest). */
    public static TwoHostsRole fromEnvironment() {
        String role = System.getenv("PANVERBS_ROLE");
        String peer = System.getenv("PANVERBS_PEER");
        String addr = System.getenv("PANVERBS_ADDR");
        Assumptions.assumeTrue(role != null && peer != null && addr != null,
                "two-hosts IT without PANVERBS_ROLE/PANVERBS_PEER/PANVERBS_ADDR: run it with testbed/test");
        return new TwoHostsRole(role, peer, addr);
    }

    /** Whether this guest runs the servers (guest A). */
    public boolean server() {
        return role.equals("server");
    }
}
