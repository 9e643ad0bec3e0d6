//! Web traffic after ns-2's WebTraf session model (`PagePool/WebTraf`): the
//! background traffic of the BI-TCP paper (Xu, Harfoush, Rhee, INFOCOM 2004)
//! and of seed paper 000, which follows it.
//!
//! Sources read (ns-2.35, as mirrored in github.com/hbatmit/ns2.35 at commits
//! 0400ea5 and f95482f): `webcache/webtraf.cc` (WebTrafSession, WebPage),
//! `tcl/webcache/webtraf.tcl` (launch-req, done-req, launch-resp),
//! `tcl/ex/web-traffic.tcl` and `tcl/ex/large-scale-web-traffic.tcl` (the
//! example parameters). The model, as ns-2 runs it:
//!
//! - Sessions arrive as a Poisson process (large-scale-web-traffic.tcl spaces
//!   session launches by an exponential `interSession`, mean 1 s).
//! - A session has a number of pages (`numPage`: a constant 10 in
//!   web-traffic.tcl, 250 in the large-scale example). Each page has
//!   `ceil(pageSize)` objects (constant 1 in both examples).
//! - A page's first object is requested when the page starts and the others
//!   `interObj` apart (exponential, mean 10 ms); the page is done when all its
//!   objects are; the next page starts `interPage` after that (exponential,
//!   mean 1 s, or 15 s in the large-scale example; `interPageOption_` 1, the
//!   default, measures the gap from the end of a page).
//! - Each object is `ceil(objSize)` packets, objSize a ParetoII (Lomax) of
//!   mean 10 packets (12 in the large-scale example) and shape 1.2, sent by the
//!   server over a fresh one-way TCP connection after the client's request:
//!   a one-packet TCP transfer from client to server, whose completion (its
//!   ACK back at the client) starts the response.
//!
//! What this source does differently, and why:
//!
//! - Sizes are in bytes (`size`, default `pareto2(mean=10KB, shape=1.2)`, ns-2's
//!   10 packets of 1000 bytes) and are not rounded up to whole packets: ns-2's
//!   `ceil` adds about half a packet per object, which a caller who wants it can
//!   put in the mean.
//! - The request is a fixed delay, `request_delay` (default: the instance's base
//!   RTT), between an object's request and the start of its transfer: the time
//!   ns-2's one-packet request takes to be sent and acknowledged on an idle
//!   path. A real request connection would double the connections (and the
//!   flows-table row would mix the request's bytes, flowing the other way, into
//!   the responses' goodput) to model a queueing delay and a rare loss of one
//!   packet on the reverse path.
//! - One client and one server per instance (its pair of hosts), where ns-2
//!   picks a random client and server per page among many nodes.
//!
//! Offered load. A session carries on average B = E[pages] x E[objects] x
//! E[size] bytes of payload, where E[pages] and E[objects] are the means of
//! the counts after rounding up (see [`Law::count_mean`]). With sessions
//! arriving at rate s per second the source offers s x B x 8 bit/s of payload,
//! so `load = L` of `load_of = C` sets s = L x C / (8 B) (Little's law over
//! sessions; it holds whatever the sessions' durations, as long as the offered
//! bytes can be carried). The load counts payload, not headers: the goodput the
//! source has on a link it has alone.
//!
//! Every random quantity has its own stream named after the instance
//! (`flow:NAME:INDEX:sessions`, `:pages`, `:objects`, `:page_gaps`,
//! `:object_gaps`, `:sizes`), so changing one distribution does not move the
//! draws of the others.

use super::agent::{poisson_gap, seconds_to_time, TransferOpener};
use super::{AppSpec, SourceBuilder, SourceDescriptor};
use cclab_core::{Actions, Agent, Connections, RngStream, TransferRecord};
use cclab_wire::{
    ControlRefused, Descriptor, FlowId, Law, NodeId, ParamDefault, ParamError, ParamType, Parameter, Params,
    Role, SizeDistribution, Time, NEVER,
};
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

pub const DESCRIPTOR: SourceDescriptor = Descriptor {
    name: "web",
    role: Role::TrafficSource,
    summary: "web sessions (Poisson) of pages of objects, each object a short TCP transfer after a request",
    source: "ns-2 PagePool/WebTraf: webcache/webtraf.cc, tcl/webcache/webtraf.tcl, tcl/ex/web-traffic.tcl \
             (ns-2.35); BI-TCP's background traffic, Xu, Harfoush, Rhee, INFOCOM 2004",
    parameters: &[
        Parameter {
            name: "sessions",
            ty: ParamType::PerSecond,
            unit: "",
            min: 1e-6,
            max: 1e6,
            default: ParamDefault::Absent,
            meaning: "mean session arrivals per unit of time, e.g. \"2/s\" (or give load)",
        },
        Parameter {
            name: "load",
            ty: ParamType::Number,
            unit: "",
            min: 0.0,
            max: 1.0,
            default: ParamDefault::Absent,
            meaning: "offered payload as a fraction of load_of, above 0 and at most 1 (or give sessions)",
        },
        Parameter {
            name: "load_of",
            ty: ParamType::Rate,
            unit: "",
            min: 1.0,
            max: 1e15,
            default: ParamDefault::Absent,
            meaning: "the rate load is a fraction of; on a dumbbell the bottleneck's rate by default",
        },
        Parameter {
            name: "pages",
            ty: ParamType::CountDistribution,
            unit: "",
            min: 1.0,
            max: 1e9,
            default: ParamDefault::Value("10"),
            meaning: "pages per session (ns-2 web-traffic.tcl: 10)",
        },
        Parameter {
            name: "objects",
            ty: ParamType::CountDistribution,
            unit: "",
            min: 1.0,
            max: 1e6,
            default: ParamDefault::Value("1"),
            meaning: "objects per page (ns-2: a constant 1)",
        },
        Parameter {
            name: "page_gap",
            ty: ParamType::DurationDistribution,
            unit: "",
            min: 0.0,
            max: 1e6,
            default: ParamDefault::Value("exponential(mean=1s)"),
            meaning: "think time from the end of a page to the start of the next (ns-2 interPage)",
        },
        Parameter {
            name: "object_gap",
            ty: ParamType::DurationDistribution,
            unit: "",
            min: 0.0,
            max: 1e6,
            default: ParamDefault::Value("exponential(mean=10ms)"),
            meaning: "time between the requests of a page's objects (ns-2 interObj)",
        },
        Parameter {
            name: "size",
            ty: ParamType::SizeDistribution,
            unit: "",
            min: 1.0,
            max: 1e12,
            default: ParamDefault::Value("pareto2(mean=10KB, shape=1.2)"),
            meaning: "object size (ns-2 objSize: ParetoII, mean 10 packets of 1000 B, shape 1.2)",
        },
        Parameter {
            name: "request_delay",
            ty: ParamType::Duration,
            unit: "",
            min: 0.0,
            max: 1e6,
            default: ParamDefault::Absent,
            meaning:
                "from an object's request to the start of its transfer; the instance's base RTT by default",
        },
    ],
    metrics: &[],
    build: SourceBuilder { build, protocols: &["tcp"] },
};

/// The offered load a session rate was derived from, kept so that the resolved
/// scenario says what was asked.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct WebLoad {
    /// Fraction of `of_bps`, in (0, 1].
    pub load: f64,
    pub of_bps: u64,
}

/// The parameters of a `web` source, checked.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct WebSpec {
    /// Session arrivals per second.
    pub sessions: f64,
    pub load: Option<WebLoad>,
    pub pages: Law,
    pub objects: Law,
    /// Seconds.
    pub page_gap: Law,
    pub object_gap: Law,
    pub size: SizeDistribution,
    #[serde(serialize_with = "super::optional_seconds")]
    pub request_delay: Option<Time>,
}

impl WebSpec {
    /// Mean payload bytes of a session: E[pages] x E[objects] x E[size].
    pub fn bytes_per_session(&self) -> f64 {
        self.pages.count_mean() * self.objects.count_mean() * self.size.mean()
    }

    /// Mean objects (transfers) of a session.
    pub fn objects_per_session(&self) -> f64 {
        self.pages.count_mean() * self.objects.count_mean()
    }

    /// The session rate that offers `load` x `of_bps` bit/s of payload.
    pub fn session_rate(&self, load: f64, of_bps: u64) -> f64 {
        load * of_bps as f64 / (8.0 * self.bytes_per_session())
    }

    /// The payload this source offers, in bit/s.
    pub fn offered_bps(&self) -> f64 {
        self.sessions * self.bytes_per_session() * 8.0
    }
}

fn build(params: &Params) -> Result<AppSpec, ParamError> {
    let mut spec = WebSpec {
        sessions: 0.0,
        load: None,
        pages: params.counts("pages")?,
        objects: params.counts("objects")?,
        page_gap: params.durations("page_gap")?,
        object_gap: params.durations("object_gap")?,
        size: params.distribution("size")?,
        request_delay: params.duration("request_delay")?,
    };
    let err = |name: &str, problem| Err(ParamError { name: name.into(), problem });
    match (params.optional_per_second("sessions")?, params.optional_number("load")?) {
        (Some(_), Some(_)) => return err("load", "and sessions both set the offered traffic: give one"),
        (None, None) => {
            return err("sessions", "or load is required (e.g. load = 0.3, or sessions = \"2/s\")")
        }
        (Some(rate), None) => {
            if params.optional_rate("load_of")?.is_some() {
                return err("load_of", "applies only with load");
            }
            spec.sessions = rate;
        }
        (None, Some(load)) => {
            if !(load > 0.0 && load <= 1.0) {
                return err("load", "must be above 0 and at most 1 (a fraction of load_of: range (0, 1])");
            }
            let Some(of_bps) = params.optional_rate("load_of")? else {
                return err(
                    "load_of",
                    "is required with load off a dumbbell (the rate load is a fraction of)",
                );
            };
            spec.sessions = spec.session_rate(load, of_bps);
            spec.load = Some(WebLoad { load, of_bps });
            if !(spec.sessions.is_finite() && spec.sessions > 0.0) {
                return err("load", "gives no session rate with these distributions");
            }
        }
    }
    Ok(AppSpec::Web(spec))
}

/// One step of the source's schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    /// Session `s` starts its next page.
    Page(usize),
    /// Session `s` requests the next object of its page.
    Request(usize),
    /// The request for an object of session `s` of `size` bytes has reached the server.
    Respond(usize, u64),
}

/// A session in progress.
#[derive(Clone, Copy, Debug, Default)]
struct Session {
    /// Pages still to start, the current one excluded.
    pages_left: u64,
    /// Objects of the current page not yet requested.
    to_request: u64,
    /// Objects of the current page requested but not yet complete.
    pending: u64,
}

/// Where a web source's draws come from: one stream per random quantity.
struct Streams {
    sessions: RngStream,
    pages: RngStream,
    objects: RngStream,
    page_gaps: RngStream,
    object_gaps: RngStream,
    sizes: RngStream,
}

impl Streams {
    fn new(seed: u64, stream: &str) -> Self {
        let s = |what: &str| RngStream::new(seed, &format!("{stream}:{what}"));
        Self {
            sessions: s("sessions"),
            pages: s("pages"),
            objects: s("objects"),
            page_gaps: s("page_gaps"),
            object_gaps: s("object_gaps"),
            sizes: s("sizes"),
        }
    }
}

pub struct WebPlan {
    pub spec: WebSpec,
    pub start: Time,
    /// The request delay when the spec gives none: the instance's base RTT.
    pub base_rtt: Time,
    /// Names the random streams: "flow:NAME:INDEX".
    pub stream: String,
    pub seed: u64,
}

pub struct WebSource {
    spec: WebSpec,
    request_delay: Time,
    draws: Streams,
    next_session: Time,
    /// Steps due, earliest first; ties in the order they were scheduled.
    steps: BinaryHeap<Reverse<(Time, u64, Step)>>,
    scheduled: u64,
    sessions: Vec<Session>,
    free: Vec<usize>,
    /// The session of each open transfer.
    open: BTreeMap<FlowId, usize>,
    opener: TransferOpener,
    started_sessions: u64,
    finished_sessions: u64,
    finished_pages: u64,
}

impl WebSource {
    pub fn new(plan: WebPlan, opener: TransferOpener) -> Self {
        let mut draws = Streams::new(plan.seed, &plan.stream);
        let next_session = plan.start.saturating_add(poisson_gap(&mut draws.sessions, plan.spec.sessions));
        Self {
            request_delay: plan.spec.request_delay.unwrap_or(plan.base_rtt),
            spec: plan.spec,
            draws,
            next_session,
            steps: BinaryHeap::new(),
            scheduled: 0,
            sessions: Vec::new(),
            free: Vec::new(),
            open: BTreeMap::new(),
            opener,
            started_sessions: 0,
            finished_sessions: 0,
            finished_pages: 0,
        }
    }

    /// Transfers (objects) opened so far.
    pub fn opened(&self) -> u64 {
        self.opener.opened()
    }

    /// Sessions started, and finished (every page complete), so far.
    pub fn sessions(&self) -> (u64, u64) {
        (self.started_sessions, self.finished_sessions)
    }

    pub fn finished_pages(&self) -> u64 {
        self.finished_pages
    }

    fn schedule(&mut self, at: Time, step: Step) {
        self.scheduled += 1;
        self.steps.push(Reverse((at, self.scheduled, step)));
    }

    fn gap(law: &Law, stream: &mut RngStream) -> Time {
        seconds_to_time(law.quantile(stream.next_f64()).max(0.0))
    }

    fn start_session(&mut self, now: Time) {
        let pages = self.spec.pages.count(self.draws.pages.next_f64());
        let session = Session { pages_left: pages - 1, to_request: 0, pending: 0 };
        let s = match self.free.pop() {
            Some(s) => {
                self.sessions[s] = session;
                s
            }
            None => {
                self.sessions.push(session);
                self.sessions.len() - 1
            }
        };
        self.started_sessions += 1;
        self.schedule(now, Step::Page(s));
    }

    /// Carries out a step; a response due now is returned for the caller to open.
    fn run(&mut self, now: Time, step: Step) -> Option<(usize, u64)> {
        match step {
            Step::Page(s) => {
                let objects = self.spec.objects.count(self.draws.objects.next_f64());
                self.sessions[s].to_request = objects;
                self.sessions[s].pending = objects;
                self.schedule(now, Step::Request(s));
                None
            }
            Step::Request(s) => {
                let size = self.spec.size.quantile(self.draws.sizes.next_f64());
                self.schedule(now.saturating_add(self.request_delay), Step::Respond(s, size));
                self.sessions[s].to_request -= 1;
                if self.sessions[s].to_request > 0 {
                    let gap = Self::gap(&self.spec.object_gap, &mut self.draws.object_gaps);
                    self.schedule(now.saturating_add(gap), Step::Request(s));
                }
                None
            }
            Step::Respond(s, size) => Some((s, size)),
        }
    }

    /// An object of session `s` is complete: the page may be, and then the session.
    fn object_done(&mut self, now: Time, s: usize) {
        let session = &mut self.sessions[s];
        session.pending -= 1;
        if session.pending > 0 {
            return;
        }
        self.finished_pages += 1;
        if session.pages_left == 0 {
            self.finished_sessions += 1;
            self.free.push(s);
            return;
        }
        session.pages_left -= 1;
        let gap = Self::gap(&self.spec.page_gap, &mut self.draws.page_gaps);
        self.schedule(now.saturating_add(gap), Step::Page(s));
    }
}

impl Agent for WebSource {
    fn connection_nodes(&self) -> Option<Vec<(NodeId, NodeId)>> {
        self.opener.connection_nodes()
    }

    /// It controls only the connections it opened.
    fn watched_nodes(&self) -> Option<Vec<NodeId>> {
        Some(Vec::new())
    }

    fn next_wakeup(&self) -> Time {
        if self.opener.failed() {
            return NEVER;
        }
        let step = self.steps.peek().map_or(NEVER, |Reverse((t, _, _))| *t);
        step.min(self.next_session)
    }

    fn on_timer(&mut self, now: Time, _connections: &Connections, actions: &mut Actions) {
        while !self.opener.failed() {
            let step = self.steps.peek().map_or(NEVER, |Reverse((t, _, _))| *t);
            if self.next_session <= now && self.next_session <= step {
                self.start_session(now);
                let gap = poisson_gap(&mut self.draws.sessions, self.spec.sessions);
                self.next_session = self.next_session.saturating_add(gap);
            } else if step <= now {
                let Some(Reverse((_, _, step))) = self.steps.pop() else { break };
                if let Some((s, size)) = self.run(now, step) {
                    if let Some(flow) = self.opener.open(now, size, actions) {
                        self.open.insert(flow, s);
                    }
                }
            } else {
                break;
            }
        }
    }

    fn on_closed(&mut self, now: Time, record: &TransferRecord, _actions: &mut Actions) {
        if let Some(s) = self.open.remove(&record.flow) {
            self.object_done(now, s);
        }
    }

    fn on_refused(&mut self, flow: FlowId, refused: ControlRefused) {
        self.opener.refused(flow, refused);
    }

    fn failure(&self) -> Option<String> {
        self.opener.failure()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::find;
    use cclab_wire::ParamValue;

    fn params(pairs: &[(&str, &str)]) -> Params {
        let d = find("web").map(|d| d.info()).expect("web is registered");
        let mut p = Params::new();
        for param in d.parameters {
            if let Some((_, text)) = pairs.iter().find(|(k, _)| *k == param.name) {
                p.insert(param.name, param.parse_text(text).expect("valid"));
            } else if let Some(v) = param.default_value() {
                p.insert(param.name, v.expect("default"));
            }
        }
        p
    }

    fn spec(pairs: &[(&str, &str)]) -> WebSpec {
        match build(&params(pairs)) {
            Ok(AppSpec::Web(s)) => s,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn load_sets_the_session_rate_from_the_mean_bytes_of_a_session() {
        // 10 pages of 2 objects of exactly 5 KB: 100 KB a session; 30 % of
        // 20 Mbit/s is 750 KB/s, 7.5 sessions a second.
        let s = spec(&[("load", "0.3"), ("load_of", "20Mbps"), ("objects", "2"), ("size", "5KB")]);
        assert_eq!(s.bytes_per_session(), 100_000.0);
        assert!((s.sessions - 7.5).abs() < 1e-12, "{}", s.sessions);
        assert!((s.offered_bps() - 6e6).abs() < 1e-6);
        assert_eq!(s.load, Some(WebLoad { load: 0.3, of_bps: 20_000_000 }));
        // The defaults: ns-2's 10 pages of one object of ParetoII(mean 10 KB).
        let d = spec(&[("load", "0.5"), ("load_of", "8Mbps")]);
        assert!((d.bytes_per_session() - 100_000.0).abs() < 1e-6);
        assert!((d.sessions - 5.0).abs() < 1e-9);
        // A rate given directly is kept.
        assert_eq!(spec(&[("sessions", "2/s")]).sessions, 2.0);
    }

    #[test]
    fn counts_are_rounded_up_and_their_means_say_so() {
        // E[ceil X] for X exponential of mean m is 1 / (1 - e^(-1/m)).
        let l = Law::Exponential { mean: 3.0 };
        let exact = 1.0 / (1.0 - (-1.0f64 / 3.0).exp());
        assert!((l.count_mean() - exact).abs() < 1e-9, "{} {exact}", l.count_mean());
        assert_eq!(Law::Constant { value: 10.0 }.count_mean(), 10.0);
        assert_eq!(Law::Constant { value: 2.5 }.count(0.3), 3);
        assert_eq!(Law::Exponential { mean: 5.0 }.count(0.0), 1);
        // A heavy tail: the sum and its integral tail against a sample mean.
        let p = Law::Pareto2 { mean: 4.0, shape: 2.5 };
        let n = 400_000;
        let sample: f64 = (0..n).map(|i| p.count((i as f64 + 0.5) / n as f64) as f64).sum::<f64>() / n as f64;
        assert!((sample - p.count_mean()).abs() / p.count_mean() < 0.01, "{sample} {}", p.count_mean());
    }

    #[test]
    fn bad_loads_and_missing_rates_are_refused() {
        let problem = |pairs: &[(&str, &str)]| build(&params(pairs)).err().map(|e| (e.name, e.problem));
        let (name, why) = problem(&[("load", "0"), ("load_of", "1Mbps")]).expect("refused");
        assert_eq!(name, "load");
        assert!(why.contains("above 0 and at most 1"), "{why}");
        assert_eq!(problem(&[]).map(|e| e.0), Some("sessions".into()));
        assert_eq!(problem(&[("load", "0.3")]).map(|e| e.0), Some("load_of".into()));
        assert_eq!(problem(&[("load", "0.3"), ("sessions", "1/s")]).map(|e| e.0), Some("load".into()));
        assert_eq!(
            problem(&[("sessions", "1/s"), ("load_of", "1Mbps")]).map(|e| e.0),
            Some("load_of".into())
        );
        // Above 1 is the descriptor's range.
        let info = find("web").map(|d| d.info()).expect("registered");
        let load = info.parameter("load").expect("load");
        let err = load.check_range(&ParamValue::Number(1.5)).expect_err("out of range");
        assert!(err.contains("out of range [0, 1]"), "{err}");
    }

    /// The session, page and object logic without an engine: one session of
    /// two pages of three objects, each object completing 50 ms after it opens.
    #[test]
    fn pages_wait_for_their_objects_and_think_times_follow_the_last() {
        let s = spec(&[
            ("sessions", "1/s"),
            ("pages", "2"),
            ("objects", "3"),
            ("object_gap", "10ms"),
            ("page_gap", "1s"),
            ("size", "1KB"),
            ("request_delay", "40ms"),
        ]);
        let plan = WebPlan { spec: s, start: 0, base_rtt: 0, stream: "flow:web:0".into(), seed: 1 };
        let factory = Box::new(|_| Err::<super::super::agent::EndpointPair, _>("unused".to_string()));
        let mut web = WebSource::new(plan, TransferOpener::new(0, 0, 0, factory));
        let first = web.next_session;
        web.next_session = NEVER; // one session only
        web.start_session(first);
        // Walk the schedule by hand: every Respond is an object "opened".
        let mut opened = Vec::new();
        let mut flow = 0;
        let mut completions: Vec<(Time, FlowId)> = Vec::new();
        loop {
            let step = web.steps.peek().map(|Reverse((t, _, _))| *t);
            let done = completions.first().map(|c| c.0);
            let take_step = match (step, done) {
                (Some(t), Some(d)) => t <= d,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            if take_step {
                let Some(Reverse((t, _, step))) = web.steps.pop() else { break };
                if let Some((sess, _)) = web.run(t, step) {
                    web.open.insert(flow, sess);
                    opened.push(t);
                    completions.push((t + 50_000_000, flow));
                    completions.sort();
                    flow += 1;
                }
            } else {
                let (d, f) = completions.remove(0);
                let sess = web.open.remove(&f).expect("open");
                web.object_done(d, sess);
            }
        }
        let ms = |t: Time| t as f64 / 1e6;
        let times: Vec<f64> = opened.iter().map(|&t| ms(t - first)).collect();
        // Page 1: requests at 0, 10, 20 ms, transfers 40 ms later; the last
        // completes at 110 ms; page 2 starts 1 s later.
        assert_eq!(times, vec![40.0, 50.0, 60.0, 1150.0, 1160.0, 1170.0]);
        assert_eq!(web.sessions(), (1, 1));
        assert_eq!(web.finished_pages(), 2);
        assert_eq!(web.free, vec![0]);
    }
}
