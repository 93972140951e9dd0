package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.EnumSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A shared receive queue misused on a real device: every verb after close, closing it under attached QPs and posted
 * receives, wrong sizes, an SRQ of another PD or context.
 */
class SrqMisuseIT {
    private CoreResources res;
    private Context ctx;
    private ProtectionDomain pd;

    @BeforeEach
    void open() {
        res = new CoreResources();
        ctx = res.context;
        pd = res.pd;
    }

    @AfterEach
    void close() {
        res.close();
    }

    @Test
    void everyVerbOfAClosedSrqThrowsNamingItAndTheVerb() {
        CompletionQueue cq = ctx.createCq(16).build();
        SharedReceiveQueue srq = pd.createSrq(8).resizableTo(16).build();
        QueuePair qp = pd.createQp(QueuePairType.RC, cq, cq).srq(srq).build();
        MemoryRegion mr = pd.allocate(4096, EnumSet.of(Access.LOCAL_WRITE));
        ReceiveRequests chain = srq.receiveRequests();
        chain.recv(1).sge(mr, 0, 64);
        assertThat(chain.post()).isEqualTo(1);
        assertThatThrownBy(mr::close).hasMessageContaining("outstanding work request");
        srq.close(); // the attached QP goes first; the receive is forgotten, the region released
        assertThat(qp.isClosed()).isTrue();
        assertThatCode(mr::close).doesNotThrowAnyException();
        srq.close();
        assertThatThrownBy(srq::receiveRequests).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("SharedReceiveQueue[").hasMessageContaining("closed");
        assertThatThrownBy(() -> chain.recv(2)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        assertThatThrownBy(chain::post).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        assertThatThrownBy(() -> srq.armLimit(1)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed").hasMessageContaining("ibv_modify_srq");
        assertThatThrownBy(() -> srq.resize(12)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed").hasMessageContaining("ibv_modify_srq");
        assertThatThrownBy(srq::query).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed").hasMessageContaining("ibv_query_srq");
        assertThatThrownBy(() -> pd.createQp(QueuePairType.RC, cq, cq).srq(srq).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }

    @Test
    void wrongSizesAndForeignObjectsAreRefusedBeforeTheProvider() {
        DeviceLimits lim = ctx.queryDevice().limits();
        assertThatThrownBy(() -> pd.createSrq(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> pd.createSrq(-1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> pd.createSrq(Integer.MAX_VALUE).build()).isInstanceOf(VerbsException.class)
                .hasMessageContaining("EINVAL").hasMessageContaining("max_srq_wr");
        assertThatThrownBy(() -> pd.createSrq(4).maxSge(lim.maxSrqSge() + 1).build())
                .isInstanceOf(VerbsException.class).hasMessageContaining("max_srq_sge");
        assertThatThrownBy(() -> pd.createSrq(4).maxSge(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> pd.createSrq(4).srqLimit(-1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> pd.createSrq(4).resizableTo(2)).isInstanceOf(IllegalArgumentException.class);
        SharedReceiveQueue srq = pd.createSrq(4).build();
        assertThatThrownBy(() -> srq.armLimit(-1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> srq.armLimit(srq.maxWr() + 1)).isInstanceOf(VerbsException.class)
                .hasMessageContaining("ibv_modify_srq");
        MemoryRegion mr = pd.allocate(4096, EnumSet.of(Access.LOCAL_WRITE));
        ReceiveRequests chain = srq.receiveRequests();
        chain.recv(1);
        for (int i = 0; i < srq.maxSge(); i++) {
            chain.sge(mr, 0, 8);
        }
        assertThatThrownBy(() -> chain.sge(mr, 0, 8)).isInstanceOf(IllegalArgumentException.class);
        chain.clear();
        assertThatThrownBy(() -> chain.recv(2).sge(mr, 4090, 8)).isInstanceOf(IndexOutOfBoundsException.class);
        chain.clear();
        ProtectionDomain other = ctx.allocPd();
        MemoryRegion theirs = other.allocate(4096, EnumSet.of(Access.LOCAL_WRITE));
        assertThatThrownBy(() -> chain.recv(3).sge(theirs, 0, 8)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("another protection domain");
        chain.clear();
        CompletionQueue cq = ctx.createCq(16).build();
        assertThatThrownBy(() -> other.createQp(QueuePairType.RC, cq, cq).srq(srq))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(srq.toString());
        // more receives than max_wr: the surplus is back-pressure, refused by name, nothing posted past the ring
        int posted = 0;
        for (int i = 0; i < srq.maxWr() + 4; i++) {
            try {
                chain.recv(10 + i).sge(mr, 0, 8);
                posted += chain.post();
            } catch (IllegalStateException | PostException full) {
                chain.clear();
                break;
            }
        }
        assertThat(posted).isLessThanOrEqualTo(srq.maxWr());
        assertThat(srq.outstanding()).isEqualTo(posted);
    }
}
