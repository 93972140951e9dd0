/**
 * The RDMA connection manager (librdmacm, {@code <rdma/rdma_cma.h>}): connections set up by IP address and port
 * instead of an out-of-band exchange of QP numbers and GIDs.
 *
 * <ul>
 *   <li>{@link dev.panverbs.core.cm.EventChannel} ({@code struct rdma_event_channel}): where events arrive; the
 *       root of everything here. Closing it closes its IDs and the contexts adopted from them.</li>
 *   <li>{@link dev.panverbs.core.cm.CmId} ({@code struct rdma_cm_id}): one endpoint in a port space
 *       ({@link dev.panverbs.core.cm.PortSpace#TCP} for RC, {@link dev.panverbs.core.cm.PortSpace#UDP} for UD);
 *       resolve, bind, listen, connect, accept, reject, disconnect, multicast, and the QP rdma_cm creates for it
 *       ({@code rdma_create_qp}), which the ID owns.</li>
 *   <li>{@link dev.panverbs.core.cm.CmEvent} ({@code struct rdma_cm_event}): a typed copy of an event,
 *       acknowledged ({@code rdma_ack_cm_event}) before it is handed out, so that destroying an ID can never wait
 *       for an acknowledgement that user code forgot.</li>
 * </ul>
 *
 * <p>Errors: a failing call throws {@link dev.panverbs.core.VerbsException} with the rdma_cm function and errno;
 * the synchronous forms ({@link dev.panverbs.core.cm.CmId#resolve}, {@link dev.panverbs.core.cm.CmId#connect(
 * ConnectionParameters, java.time.Duration)}, {@link dev.panverbs.core.cm.CmId#await}) turn an error event into
 * {@link dev.panverbs.core.cm.ConnectionRejectedException} or {@link dev.panverbs.core.cm.CmEventException}, and
 * a wait that outlives its timeout into {@link dev.panverbs.core.cm.CmTimeoutException}.
 */
package dev.panverbs.core.cm;
