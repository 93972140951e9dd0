package dev.panverbs.tools.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class CreditWindowTest {
    @Test
    void oneCreditIsReservedForShutdown() {
        CreditWindow w = new CreditWindow(3, 1000);
        assertThat(w.tryAcquire()).isTrue();
        assertThat(w.tryAcquire()).isTrue();
        assertThat(w.tryAcquire()).as("the third credit is the shutdown reserve").isFalse();
        w.acquireShutdown();
        assertThat(w.inUse()).isEqualTo(3);
    }

    @Test
    void releaseRestoresCredits() {
        CreditWindow w = new CreditWindow(2, 1000);
        assertThat(w.tryAcquire()).isTrue();
        assertThat(w.tryAcquire()).isFalse();
        w.release(1);
        assertThat(w.available()).isEqualTo(1);
        assertThat(w.tryAcquire()).isTrue();
    }

    @Test
    void releaseMoreThanInUseIsAProtocolError() {
        CreditWindow w = new CreditWindow(8, 1000);
        w.tryAcquire();
        w.tryAcquire();
        assertThatThrownBy(() -> w.release(3)).isInstanceOf(RpcProtocolException.class)
                .hasMessage("the server returned 3 credits but only 2 were in use (it advertised 8)");
    }

    @Test
    void noCreditsAfterShutdown() {
        CreditWindow w = new CreditWindow(4, 1000);
        w.acquireShutdown();
        assertThat(w.tryAcquire()).isFalse();
        assertThatThrownBy(w::acquireShutdown).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void limitCapsTheCreditsInUse() {
        CreditWindow w = new CreditWindow(64, 3);
        assertThat(w.available()).isEqualTo(3);
        assertThat(CreditWindow.usable(64, 3)).isEqualTo(3);
        assertThat(CreditWindow.usable(4, 64)).isEqualTo(3);
    }

    @Test
    void fewerThanTwoCreditsRejected() {
        assertThatThrownBy(() -> new CreditWindow(1, 1)).hasMessageContaining("at least 2 credits");
    }
}
