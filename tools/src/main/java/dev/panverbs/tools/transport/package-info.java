/**
 * A small request/response transport over RC queue pairs: the example of how to build a custom transport on
 * panverbs. {@link dev.panverbs.tools.transport.RpcClient#call RpcClient.call(request, responseHandler)} on one
 * side, {@link dev.panverbs.tools.transport.RpcServer} with an {@link dev.panverbs.tools.transport.RpcHandler}
 * on the other.
 *
 * <p>Two ways to connect, the same protocol after: {@code RpcClient.connect}/{@code RpcServer.start} exchange the
 * handshake (QP number, PSN, LID, GID, MTU and the resources) over a TCP socket and move the QPs themselves;
 * {@code RpcClient.connectCm}/{@code RpcServer.startCm} connect through rdma_cm by IP address and port, the
 * resources travel as the CM messages' private data ({@code CmHandshake}) and the QPs, still the transport's own,
 * are moved with the attributes {@code rdma_init_qp_attr} computes.
 *
 * <h2>Design, and why</h2>
 * <ul>
 * <li><b>Requests are SEND WITH IMMEDIATE, responses RDMA WRITE WITH IMMEDIATE.</b> A request's size and
 *     arrival are not known in advance, so it goes into a receive buffer the server posted (two-sided). The
 *     response's destination is known: the client registered one response slot per outstanding call and told
 *     the server its address and rkey in the handshake, so the server writes the response straight into that
 *     slot (one-sided, no receive buffer to size on the client, no copy). The immediate makes the write visible
 *     as a completion on the client and names the request; see {@code Immediate} for its layout.</li>
 * <li><b>Credit-based flow control.</b> A SEND that finds no posted receive is answered with an RNR NAK; the
 *     sender retries {@code rnr_retry} times and then breaks the QP. So the server advertises its posted receive
 *     buffers as credits, and the client never posts a SEND without a credit ({@code CreditWindow}): when none is
 *     left, {@code call} blocks (back-pressure) instead of failing. Credits come back piggy-backed in the 8-byte
 *     header of each response, at no extra cost, or, when messages got no response (one-way
 *     {@link dev.panverbs.tools.transport.RpcClient#send send}), in an explicit CREDIT message once a quarter of
 *     them are pending ({@code CreditReturn}; the proof that this never deadlocks is in its Javadoc and in
 *     {@code CreditProtocolModelTest}). The response direction needs no credits: the client posts receives (no
 *     buffers: a write with immediate consumes a receive but places its data by address) for every response and
 *     CREDIT message that can be in flight, {@code 2 * slots + 1}.</li>
 * <li><b>Pre-registered buffer pools.</b> Everything is allocated and registered once per connection: the
 *     client's send buffers and response slots, the server's receive buffers and response staging buffers. The
 *     data path registers nothing and allocates nothing but a slice view per message. The server's handler
 *     writes the response directly into the registered staging buffer.</li>
 * <li><b>Slots and generations.</b> A client slot is reused only when both the SEND completed (the NIC no
 *     longer reads the request) and the response was handled (the application no longer reads the slot).
 *     Request ids carry a generation, so a stray response is a protocol error, not a wrong answer.</li>
 * <li><b>Completion channels, not busy polling.</b> Each side sleeps in {@code ibv_get_cq_event} when idle and
 *     drains the CQ after re-arming it, the race-free order. The server serves all connections from one thread
 *     and one channel: each connection's CQ reports to it.</li>
 * <li><b>Clean shutdown in-band.</b> The client keeps one credit in reserve, so SHUTDOWN can always be sent.
 *     The server handles messages in order, so when it sees SHUTDOWN every response is already posted; it
 *     answers with a zero-length write with immediate, which RC delivers after those responses. When the client
 *     sees it, nothing is in flight and both sides destroy their QPs. The TCP connection is used for the
 *     handshake only; on the rdma_cm route the client then disconnects its ID and the server answers.</li>
 * <li><b>Every peer input is checked</b>: handshake ranges, credits returned against credits in use, request ids
 *     against outstanding slots, response lengths against slot sizes. A violation ends the connection with
 *     {@link dev.panverbs.tools.transport.RpcProtocolException}.</li>
 * </ul>
 *
 * <h2>What a production transport would add</h2>
 * Unsignaled sends with periodic signaling (fewer completions), inline sends for small requests, a shared
 * receive queue across connections (credits then become a server-wide pool), several connections per client
 * for multi-core scaling, and request timeouts.
 */
package dev.panverbs.tools.transport;
