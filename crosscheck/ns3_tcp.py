"""What every ns-3 cross-check shares (run by hand, not in CI): the TCP configuration and the topology pieces.

ns-3 3.44's TCP set as cclab's flows are in the cross-checks: the given
congestion control, classic recovery (not ns-3's default PRR), SACK and
timestamps, an ACK per segment, initial window 4, a 1 s minimum RTO, and
buffers large enough never to limit the window.
"""

from typing import Any, NamedTuple

from ns import ns


def configure_tcp(
    socket_type: str, segment: int, *, limited_transmit: bool | None = None, delayed_ack_count: int = 1
) -> None:
    """Sets ns-3's TCP defaults for every socket created afterwards (an ACK per
    `delayed_ack_count` in-order segments: 1 unless asked, ns-3's own default is 2)."""
    ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", ns.StringValue(socket_type))
    ns.Config.SetDefault(
        "ns3::TcpL4Protocol::RecoveryType", ns.TypeIdValue(ns.TypeId.LookupByName("ns3::TcpClassicRecovery"))
    )
    ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(segment))
    ns.Config.SetDefault("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(4))
    ns.Config.SetDefault("ns3::TcpSocket::DelAckCount", ns.UintegerValue(delayed_ack_count))
    ns.Config.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(1 << 30))
    ns.Config.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(1 << 30))
    ns.Config.SetDefault("ns3::TcpSocketBase::Sack", ns.BooleanValue(True))
    ns.Config.SetDefault("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(True))
    if limited_transmit is not None:
        ns.Config.SetDefault("ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(limited_transmit))
    ns.Config.SetDefault("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.Seconds(1.0)))


def point_to_point(
    nodes: ns.NodeContainer, a: int, b: int, rate: str, delay_ms: float, queue: str
) -> ns.NetDeviceContainer:
    """A point-to-point link between nodes `a` and `b` with a DropTail device queue of `queue`."""
    p2p = ns.PointToPointHelper()
    p2p.SetDeviceAttribute("DataRate", ns.StringValue(rate))
    p2p.SetChannelAttribute("Delay", ns.TimeValue(ns.MilliSeconds(delay_ms)))
    p2p.SetQueue("ns3::DropTailQueue", "MaxSize", ns.StringValue(queue))
    pair = ns.NodeContainer()
    pair.Add(nodes.Get(a))
    pair.Add(nodes.Get(b))
    return p2p.Install(pair)


def address(devices: ns.NetDeviceContainer, subnet: str, *, queue_disc: bool = False) -> ns.Ipv4InterfaceContainer:
    """Numbers the link's two ends in `subnet` (a.b.c.0/24); without `queue_disc` the default queue
    disc that Assign installs is removed again, so the device's DropTail queue is the link's only queue."""
    helper = ns.Ipv4AddressHelper()
    helper.SetBase(ns.Ipv4Address(subnet), ns.Ipv4Mask("255.255.255.0"))
    interfaces = helper.Assign(devices)
    if not queue_disc:
        ns.TrafficControlHelper().Uninstall(devices)
    return interfaces


def packet_sink(node: ns.Node, port: int) -> ns.ApplicationContainer:
    """A TCP sink on `port`, started at 0."""
    any_address = ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo()
    apps = ns.PacketSinkHelper("ns3::TcpSocketFactory", any_address).Install(node)
    apps.Start(ns.Seconds(0.0))
    return apps


def bulk_send(node: ns.Node, to: ns.Ipv4Address, port: int, segment: int, start_s: float) -> ns.ApplicationContainer:
    """An unlimited bulk TCP transfer from `node` to `to`:`port` in `segment`-byte writes from `start_s`."""
    bulk = ns.BulkSendHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(to, port).ConvertTo())
    bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
    bulk.SetAttribute("SendSize", ns.UintegerValue(segment))
    apps = bulk.Install(node)
    apps.Start(ns.Seconds(start_s))
    return apps


class Dumbbell(NamedTuple):
    """What `dumbbell` built: flow i's sender is node i, its receiver node n + 2 + i (n flows);
    `discs` the bottleneck's queue discs (forward first) when one was asked for."""

    nodes: ns.NodeContainer
    receivers: list[ns.Ipv4Address]
    bottleneck: ns.NetDeviceContainer
    discs: ns.QueueDiscContainer | None = None

    def sender(self, flow: int) -> ns.Node:
        return self.nodes.Get(flow)

    def receiver(self, flow: int) -> ns.Node:
        return self.nodes.Get(len(self.receivers) + 2 + flow)


def dumbbell(
    rtts_ms: list[float],
    bottleneck: str,
    bottleneck_delay_ms: float,
    buffer_packets: int,
    *,
    access_rate: str = "1Gbps",
    queue_disc: ns.TrafficControlHelper | None = None,
) -> Dumbbell:
    """cclab's dumbbell: one sender and one receiver per flow, each behind its own access link
    (`access_rate`) whose delay gives the flow its base RTT `rtts_ms[i]`, and the bottleneck from
    router n to router n + 1 with a DropTail buffer of `buffer_packets` waiting (traffic control
    removed). With `queue_disc`, that helper's root queue disc is installed on both bottleneck
    devices instead (before the addresses, so no default one is), above a device queue of
    `buffer_packets` (give 1, so that the queue builds in the queue disc). Routes are computed; the
    sockets' settings (configure_tcp) are left to the caller."""
    n = len(rtts_ms)
    nodes = ns.NodeContainer()
    nodes.Create(2 * n + 2)
    ns.InternetStackHelper().Install(nodes)
    left, right = n, n + 1
    receivers = []
    for flow, rtt in enumerate(rtts_ms):
        access_ms = (rtt / 2 - bottleneck_delay_ms) / 2
        address(point_to_point(nodes, flow, left, access_rate, access_ms, "100000p"), f"10.{1 + 2 * flow}.0.0")
        far = point_to_point(nodes, right, n + 2 + flow, access_rate, access_ms, "100000p")
        receivers.append(address(far, f"10.{2 + 2 * flow}.0.0").GetAddress(1))
    middle = point_to_point(nodes, left, right, bottleneck, bottleneck_delay_ms, f"{buffer_packets}p")
    discs = queue_disc.Install(middle) if queue_disc is not None else None
    address(middle, "10.99.0.0", queue_disc=queue_disc is not None)
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    return Dumbbell(nodes, receivers, middle, discs)


def one_flow_path(rtt_ms: float, bottleneck: str, bottleneck_delay_ms: float, buffer_packets: int, loss: float,
                  segment: int) -> ns.ApplicationContainer:  # fmt: skip
    """Node 0 sends one bulk flow to node 3 over routers 1 and 2: 1 Gbit/s access links sized for a
    base RTT of `rtt_ms`, the bottleneck 1 -> 2 with a DropTail buffer of `buffer_packets` and
    Bernoulli packet loss `loss` where it arrives at router 2. Returns the receiver's sink."""
    nodes = ns.NodeContainer()
    nodes.Create(4)
    ns.InternetStackHelper().Install(nodes)
    access_ms = (rtt_ms / 2 - bottleneck_delay_ms) / 2
    address(point_to_point(nodes, 0, 1, "1Gbps", access_ms, "100000p"), "10.1.0.0")
    middle = point_to_point(nodes, 1, 2, bottleneck, bottleneck_delay_ms, f"{buffer_packets}p")
    address(middle, "10.2.0.0")
    far = address(point_to_point(nodes, 2, 3, "1Gbps", access_ms, "100000p"), "10.3.0.0")
    if loss > 0:
        em = ns.CreateObject[ns.RateErrorModel]()
        em.SetAttribute("ErrorRate", ns.DoubleValue(loss))
        em.SetAttribute("ErrorUnit", ns.StringValue("ERROR_UNIT_PACKET"))
        middle.Get(1).SetAttribute("ReceiveErrorModel", ns.PointerValue(em))
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    port = 5000
    sink_apps = packet_sink(nodes.Get(3), port)
    bulk_send(nodes.Get(0), far.GetAddress(1), port, segment, 0.0)
    return sink_apps


def attributes_of(obj: Any) -> dict[str, str]:
    """Every attribute of ns-3 object `obj` (and its parents' types) as the object holds it."""
    values = {}
    tid = obj.GetInstanceTypeId()
    while True:
        for i in range(tid.GetAttributeN()):
            info = tid.GetAttribute(i)
            if not (info.flags & ns.TypeId.ATTR_GET and info.accessor.HasGetter()):
                continue  # e.g. RedQueueDisc's Alpha has only a setter; getting it is fatal
            value = ns.StringValue()
            try:
                obj.GetAttribute(info.name, value)  # ns-3 serializes any attribute into a StringValue
            except Exception:  # noqa: BLE001, S112 (lists of pointers and the like do not serialize)
                continue
            values[str(info.name)] = str(value.Get())
        if tid.GetName() == "ns3::Object":
            return values
        tid = tid.GetParent()
        if tid == ns.TypeId.LookupByName("ns3::ObjectBase"):
            return values
