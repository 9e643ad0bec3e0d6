"""The TCP configuration every ns-3 cross-check shares (run by hand, not in CI).

ns-3 3.44's TCP set as cclab's flows are in the cross-checks: the given
congestion control, classic recovery (not ns-3's default PRR), SACK and
timestamps, an ACK per segment, initial window 4, a 1 s minimum RTO, and
buffers large enough never to limit the window.
"""

from ns import ns


def configure_tcp(socket_type: str, segment: int, *, limited_transmit: bool | None = None) -> None:
    """Sets ns-3's TCP defaults for every socket created afterwards."""
    ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", ns.StringValue(socket_type))
    ns.Config.SetDefault(
        "ns3::TcpL4Protocol::RecoveryType", ns.TypeIdValue(ns.TypeId.LookupByName("ns3::TcpClassicRecovery"))
    )
    ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(segment))
    ns.Config.SetDefault("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(4))
    ns.Config.SetDefault("ns3::TcpSocket::DelAckCount", ns.UintegerValue(1))
    ns.Config.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(1 << 30))
    ns.Config.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(1 << 30))
    ns.Config.SetDefault("ns3::TcpSocketBase::Sack", ns.BooleanValue(True))
    ns.Config.SetDefault("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(True))
    if limited_transmit is not None:
        ns.Config.SetDefault("ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(limited_transmit))
    ns.Config.SetDefault("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.Seconds(1.0)))
