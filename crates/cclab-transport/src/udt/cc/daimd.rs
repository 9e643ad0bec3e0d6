//! UDT's native congestion control, DAIMD (Gu and Grossman, "UDT: UDP-based
//! data transfer for high-speed wide area networks", Computer Networks 51(7),
//! 2007; draft-gg-udt-03 §6; UDT 4.11 `src/ccc.cpp`, `CUDTCC`), as the seed
//! paper (Park et al. 2011, §II.2, eq. 5-6, Tab. 1, Fig. 2-3) describes it.
//!
//! Rate control, once per SYN (10 ms) at a full ACK:
//! - **slow start**: the window grows by the packets acknowledged since the
//!   last step (`CWnd += seqlen(LastAck, ack)`, which counts both ends) while
//!   the period stays at 1 µs; above the handshake's flow window slow start
//!   ends and the period becomes `1e6 / receive rate` (or `(RTT + SYN) /
//!   CWnd` without a rate);
//! - after it, the window is `receive rate x (RTT + SYN) + 16` and, unless a
//!   NAK came since the last step, the rate grows by `inc` packets per SYN:
//!   with spare capacity `B = capacity - 1e6/period` (capped at capacity/9,
//!   an integer division, when the period is above its value before the
//!   last decrease),
//!   `inc = max(10^ceil(log10(B x MSS x 8)) x 1.5e-6 / MSS, floor)`, and
//!   `period = period x SYN / (period x inc + SYN)` (eq. 5-6): the seed's
//!   Tab. 1 bands, 0.001 packets per SYN for 0.1-1 Mbit/s of spare capacity
//!   up to 1 for 0.1-1 Gbit/s. The floor is `1/MSS` in the seed's Tab. 1 and
//!   UDT up to 4.10 (`increase_floor = "1/mss"`, 0.00067) and 0.01 in 4.11.
//! - **on a NAK** (Fig. 2): slow start ends (4.11: period = 1e6 / receive
//!   rate, and nothing else this time); a loss beyond the last decrease point
//!   starts a congestion period: `period = ceil(period x 1.125)`, AvgNAKNum
//!   = ceil(0.875 AvgNAKNum + 0.125 NAKCount), NAKCount = DecCount = 1, the
//!   decrease point moves to the largest number sent, and DecRandom =
//!   ceil(AvgNAKNum x u) (at least 1), u uniform in [0, 1]; later NAKs of the
//!   period decrease again every DecRandom-th NAK, at most five decreases
//!   per period in all. UDT draws u with `srand(LastDecSeq); rand()`: a
//!   function of the decrease point. The model keeps that property with a
//!   hash of the decrease point instead of glibc's generator, so it owns no
//!   randomness and replays exactly.
//! - **on an EXP timeout**: only slow start ends (4.11 keeps the period).
//!
//! Where the model departs from 4.11: ending slow start on a NAK or a
//! timeout before any receive rate is known, 4.11 writes `period = CWnd /
//! (RTT + SYN)` (a rate where a period belongs); the model uses the ACK
//! path's `(RTT + SYN) / CWnd`. And 4.11 starts the SYN clock of rate
//! control when the connection starts, the model at the first full ACK
//! (which comes an RTT later, so the first step is not skipped either way
//! on paths longer than 10 ms).
//!
//! Options ([`Decrease`], [`Window`]) swap in the seed's RTT-banded decrease
//! factor ([`super::rtt_banded`]) and its congestion-prediction window
//! ([`super::prediction`]); `decrease_factor` sets the fixed factor for the
//! seed's Fig. 4-5 sweeps (1.120 ... 1.125).

use super::prediction::{Decision, Prediction};
use super::rtt_banded::RttBands;
use super::{UdtCcDescriptor, UdtCcInput, UdtCongestionControl};
use crate::udt::SYN;
use cclab_wire::{
    Descriptor, MetricDesc, Metrics, ParamDefault, ParamError, ParamType, Parameter, Params, Role,
};

/// UDT's rate-control interval, SYN, in microseconds.
pub const SYN_US: f64 = SYN as f64 / 1000.0;
/// Decreases allowed in one congestion period (UDT's `DecCount++ < 5`).
const MAX_DECREASES: u32 = 5;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decrease {
    Fixed,
    RttBanded,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    Native,
    Prediction,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DecreaseRule {
    Fixed(f64),
    RttBanded(RttBands),
}

impl DecreaseRule {
    fn factor(&self, rtt_us: i64) -> f64 {
        match self {
            Self::Fixed(f) => *f,
            Self::RttBanded(b) => b.factor(rtt_us),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DaimdConfig {
    pub decrease: DecreaseRule,
    pub prediction: Option<Prediction>,
    /// The least increase per SYN, packets.
    pub increase_floor: IncreaseFloor,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IncreaseFloor {
    /// `1/MSS` (the seed's Tab. 1, UDT up to 4.10).
    PerMss,
    /// 0.01 packets per SYN (UDT 4.11).
    Fixed001,
}

impl Default for DaimdConfig {
    fn default() -> Self {
        Self { decrease: DecreaseRule::Fixed(1.125), prediction: None, increase_floor: IncreaseFloor::PerMss }
    }
}

pub struct Daimd {
    cfg: DaimdConfig,
    period_us: f64,
    window: f64,
    slow_start: bool,
    last_rc_time: Option<cclab_wire::Time>,
    last_ack: i64,
    loss: bool,
    last_dec_seq: i64,
    last_dec_period: f64,
    nak_count: u32,
    avg_nak_num: u32,
    dec_random: u32,
    dec_count: u32,
    prev_rtt_us: Option<i64>,
    decreases: u64,
    /// The prediction's latest nDiff and how often it decreased, kept and increased the window.
    last_n_diff: f64,
    decisions: [u64; 3],
}

impl Daimd {
    pub fn new(cfg: DaimdConfig) -> Self {
        Self {
            cfg,
            period_us: 1.0,
            window: 16.0,
            slow_start: true,
            last_rc_time: None,
            last_ack: -1,
            loss: false,
            last_dec_seq: -1,
            last_dec_period: 1.0,
            nak_count: 0,
            avg_nak_num: 0,
            dec_random: 1,
            dec_count: 0,
            prev_rtt_us: None,
            decreases: 0,
            last_n_diff: 0.0,
            decisions: [0; 3],
        }
    }

    pub fn in_slow_start(&self) -> bool {
        self.slow_start
    }

    /// Packets per SYN the rate grows by with `spare` packets per second of
    /// spare capacity (eq. 5).
    pub fn increase(spare: f64, mss: u32, floor: IncreaseFloor) -> f64 {
        let min_inc = match floor {
            IncreaseFloor::PerMss => 1.0 / mss as f64,
            IncreaseFloor::Fixed001 => 0.01,
        };
        if spare <= 0.0 {
            return min_inc;
        }
        let bits = spare * mss as f64 * 8.0;
        (10f64.powf(bits.log10().ceil()) * 1.5e-6 / mss as f64).max(min_inc)
    }

    fn end_slow_start(&mut self, input: &UdtCcInput) {
        self.slow_start = false;
        self.period_us = if input.receive_rate > 0 {
            1e6 / input.receive_rate as f64
        } else {
            (input.rtt_us as f64 + SYN_US) / self.window
        };
    }

    /// UDT's window after slow start, `receive rate x (RTT + SYN)`, packets (without the 16).
    fn rate_window(input: &UdtCcInput) -> f64 {
        input.receive_rate as f64 / 1e6 * (input.rtt_us as f64 + SYN_US)
    }

    fn set_window_after_slow_start(&mut self, input: &UdtCcInput) {
        let base = Self::rate_window(input);
        match (self.cfg.prediction, self.prev_rtt_us) {
            (Some(p), Some(prev)) => {
                self.last_n_diff = p.n_diff(self.window, prev as f64, input.rtt_us as f64);
                let decision = p.decide(self.window, prev as f64, input.rtt_us as f64);
                self.decisions[decision as usize] += 1;
                if let Some(w) = p.window(decision, base) {
                    self.window = w;
                }
            }
            _ => self.window = base + 16.0,
        }
    }

    /// A uniform draw in [0, 1] that depends only on the decrease point.
    fn draw(seq: i64) -> f64 {
        let mut z = (seq as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    fn decrease(&mut self, input: &UdtCcInput) {
        self.period_us = (self.period_us * self.cfg.decrease.factor(input.rtt_us)).ceil();
        self.last_dec_seq = input.largest_sent;
        self.decreases += 1;
    }
}

impl UdtCongestionControl for Daimd {
    fn on_ack(&mut self, ack: i64, input: &UdtCcInput) {
        if self.last_rc_time.is_some_and(|t| input.now < t + SYN) {
            return;
        }
        self.last_rc_time = Some(input.now);
        if self.slow_start {
            self.window += (ack - self.last_ack + 1) as f64;
            self.last_ack = ack;
            if self.window > input.max_window {
                self.end_slow_start(input);
            }
        } else {
            self.set_window_after_slow_start(input);
        }
        self.prev_rtt_us = Some(input.rtt_us);
        if self.slow_start {
            return;
        }
        if self.loss {
            self.loss = false;
            return;
        }
        let capacity = input.bandwidth as f64;
        let mut spare = (capacity - 1e6 / self.period_us).trunc();
        // UDT divides the int capacity by 9 in integers: the cap is whole
        // packets per second, which decides the band at its edges.
        let ninth = (input.bandwidth / 9) as f64;
        if self.period_us > self.last_dec_period && ninth < spare {
            spare = ninth;
        }
        let inc = Self::increase(spare, input.mss, self.cfg.increase_floor);
        self.period_us = self.period_us * SYN_US / (self.period_us * inc + SYN_US);
    }

    fn on_loss(&mut self, first_lost: i64, input: &UdtCcInput) {
        if self.slow_start {
            self.end_slow_start(input);
            if input.receive_rate > 0 {
                return;
            }
        }
        self.loss = true;
        if first_lost > self.last_dec_seq {
            self.last_dec_period = self.period_us;
            self.decrease(input);
            self.avg_nak_num =
                (self.avg_nak_num as f64 * 0.875 + self.nak_count as f64 * 0.125).ceil() as u32;
            self.nak_count = 1;
            self.dec_count = 1;
            self.dec_random =
                ((self.avg_nak_num as f64 * Self::draw(self.last_dec_seq)).ceil() as u32).max(1);
        } else {
            // UDT's `(DecCount++ < 5) && (0 == (++NAKCount % DecRandom))`:
            // the count of NAKs stops once five decreases were made.
            let allowed = self.dec_count < MAX_DECREASES;
            self.dec_count += 1;
            if allowed {
                self.nak_count += 1;
                if self.nak_count.is_multiple_of(self.dec_random) {
                    self.decrease(input);
                }
            }
        }
    }

    fn on_timeout(&mut self, input: &UdtCcInput) {
        if self.slow_start {
            self.end_slow_start(input);
        }
    }

    fn period_us(&self) -> f64 {
        self.period_us
    }

    fn window(&self) -> f64 {
        self.window
    }

    fn metrics(&self, out: &mut Metrics<'_>) {
        out.put("period_us", self.period_us);
        out.put("rate", 1e6 / self.period_us.max(1e-9));
        out.put("slow_start", f64::from(u8::from(self.slow_start)));
        out.put("decreases", self.decreases as f64);
        if self.cfg.prediction.is_some() {
            out.put("n_diff", self.last_n_diff);
            out.put("window_decreases", self.decisions[Decision::Decrease as usize] as f64);
            out.put("window_keeps", self.decisions[Decision::Keep as usize] as f64);
            out.put("window_increases", self.decisions[Decision::Increase as usize] as f64);
        }
    }
}

pub const METRICS: &[MetricDesc] = &[
    MetricDesc { name: "period_us", unit: "us", meaning: "inter-packet sending period" },
    MetricDesc { name: "rate", unit: "packets/s", meaning: "sending rate the period allows, 1e6 / period" },
    MetricDesc { name: "slow_start", unit: "", meaning: "1 in slow start, else 0" },
    MetricDesc { name: "decreases", unit: "", meaning: "rate decreases made so far" },
];

/// What a DAIMD with the congestion-prediction window publishes: [`METRICS`] and the prediction's.
pub const PREDICTION_METRICS: &[MetricDesc] = &[
    METRICS[0],
    METRICS[1],
    METRICS[2],
    METRICS[3],
    MetricDesc {
        name: "n_diff",
        unit: "packets per nDiff unit",
        meaning: "nDiff at the latest prediction (eq. 9)",
    },
    MetricDesc {
        name: "window_decreases",
        unit: "",
        meaning: "predictions above beta so far (window x 0.9)",
    },
    MetricDesc {
        name: "window_keeps",
        unit: "",
        meaning: "predictions between alpha and beta so far (window kept)",
    },
    MetricDesc {
        name: "window_increases",
        unit: "",
        meaning: "predictions below alpha so far (window x 1.1)",
    },
];

/// The parameters of every DAIMD descriptor; `decrease` and `window` default
/// to the variant's choices.
pub const fn parameters(decrease: Decrease, window: Window) -> [Parameter; 13] {
    let decrease = match decrease {
        Decrease::Fixed => "fixed",
        Decrease::RttBanded => "rtt_banded",
    };
    let window = match window {
        Window::Native => "native",
        Window::Prediction => "prediction",
    };
    const fn factor(name: &'static str, default: &'static str, meaning: &'static str) -> Parameter {
        Parameter {
            name,
            ty: ParamType::Number,
            unit: "",
            min: 1.001,
            max: 2.0,
            default: ParamDefault::Value(default),
            meaning,
        }
    }
    [
        Parameter {
            name: "decrease",
            ty: ParamType::Choice(&["fixed", "rtt_banded"]),
            unit: "",
            min: 0.0,
            max: 0.0,
            default: ParamDefault::Value(decrease),
            meaning: "NAK decrease factor: decrease_factor always, or by RTT band (the seed's Fig. 6)",
        },
        factor("decrease_factor", "1.125", "period multiplier on a NAK (decrease = \"fixed\"; UDT's 1.125)"),
        Parameter {
            name: "band_low",
            ty: ParamType::Duration,
            unit: "",
            min: 0.0,
            max: 10.0,
            default: ParamDefault::Value("50ms"),
            meaning: "RTT up to which factor_low applies (decrease = \"rtt_banded\")",
        },
        Parameter {
            name: "band_high",
            ty: ParamType::Duration,
            unit: "",
            min: 0.0,
            max: 10.0,
            default: ParamDefault::Value("150ms"),
            meaning: "RTT up to which factor_mid applies; factor_high above (decrease = \"rtt_banded\")",
        },
        factor("factor_low", "1.120", "period multiplier for RTT <= band_low"),
        factor("factor_mid", "1.125", "period multiplier for band_low < RTT <= band_high"),
        factor("factor_high", "1.123", "period multiplier for RTT > band_high"),
        Parameter {
            name: "window",
            ty: ParamType::Choice(&["native", "prediction"]),
            unit: "",
            min: 0.0,
            max: 0.0,
            default: ParamDefault::Value(window),
            meaning: "window after slow start: UDT's rate x (RTT + SYN) + 16, or the seed's congestion prediction (Fig. 7)",
        },
        Parameter {
            name: "alpha",
            ty: ParamType::Number,
            unit: "packets per ndiff_unit",
            min: -1e6,
            max: 1e6,
            default: ParamDefault::Value("1.5"),
            meaning: "below it nDiff increases the window (window = \"prediction\")",
        },
        Parameter {
            name: "beta",
            ty: ParamType::Number,
            unit: "packets per ndiff_unit",
            min: -1e6,
            max: 1e6,
            default: ParamDefault::Value("3.5"),
            meaning: "above it nDiff decreases the window (window = \"prediction\")",
        },
        Parameter {
            name: "ndiff_unit",
            ty: ParamType::Choice(&["ms", "s", "us"]),
            unit: "",
            min: 0.0,
            max: 0.0,
            default: ParamDefault::Value("ms"),
            meaning: "time unit of nDiff's rates (the paper gives none; see the module header)",
        },
        Parameter {
            name: "window_floor",
            ty: ParamType::Integer,
            unit: "packets",
            min: 1.0,
            max: 1e6,
            default: ParamDefault::Value("16"),
            meaning: "least window the prediction sets (window = \"prediction\"; see prediction.rs)",
        },
        Parameter {
            name: "increase_floor",
            ty: ParamType::Choice(&["1/mss", "0.01"]),
            unit: "packets per SYN",
            min: 0.0,
            max: 0.0,
            default: ParamDefault::Value("1/mss"),
            meaning: "least rate increase per SYN: 1/MSS as the seed's Tab. 1 and UDT <= 4.10, or 0.01 as UDT 4.11",
        },
    ]
}

pub const DESCRIPTOR: UdtCcDescriptor = Descriptor {
    name: "udt",
    role: Role::CongestionControl,
    summary: "UDT's native DAIMD rate control: SYN-periodic increase by spare capacity, period x 1.125 per NAK",
    source: "Gu & Grossman, Computer Networks 51(7) 2007; draft-gg-udt-03 §6; UDT 4.11 src/ccc.cpp (CUDTCC) with the increase floor of 1/MSS of seed 002 eq. 5 and UDT 4.10 (4.11: 0.01, increase_floor = \"0.01\"); seed 002 eq. 5-6, Tab. 1",
    parameters: &parameters(Decrease::Fixed, Window::Native),
    metrics: METRICS,
    build,
};

pub fn build(p: &Params) -> Result<Box<dyn UdtCongestionControl>, ParamError> {
    let decrease = match p.choice("decrease")? {
        "rtt_banded" => {
            let edge = |name: &str| p.duration(name).map(|d| d.unwrap_or(0));
            DecreaseRule::RttBanded(RttBands {
                low_edge: edge("band_low")?,
                high_edge: edge("band_high")?,
                low_factor: p.number("factor_low")?,
                mid_factor: p.number("factor_mid")?,
                high_factor: p.number("factor_high")?,
            })
        }
        _ => DecreaseRule::Fixed(p.number("decrease_factor")?),
    };
    let prediction = match p.choice("window")? {
        "prediction" => {
            let (alpha, beta) = (p.number("alpha")?, p.number("beta")?);
            if alpha > beta {
                return Err(ParamError { name: "alpha".into(), problem: "must not exceed beta" });
            }
            let unit_us = match p.choice("ndiff_unit")? {
                "s" => 1e6,
                "us" => 1.0,
                _ => 1e3,
            };
            Some(Prediction { alpha, beta, unit_us, floor: p.number("window_floor")? })
        }
        _ => None,
    };
    let increase_floor = match p.choice("increase_floor")? {
        "0.01" => IncreaseFloor::Fixed001,
        _ => IncreaseFloor::PerMss,
    };
    Ok(Box::new(Daimd::new(DaimdConfig { decrease, prediction, increase_floor })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_wire::time::millis;
    use cclab_wire::Time;

    fn input(now: Time, receive_rate: i64, bandwidth: i64) -> UdtCcInput {
        UdtCcInput {
            now,
            rtt_us: 100_000,
            receive_rate,
            bandwidth,
            mss: 1500,
            max_window: 8192.0,
            largest_sent: 1000,
        }
    }

    /// Packets per second for a spare capacity in Mbit/s with 1500-byte packets.
    fn pps(mbps: f64) -> f64 {
        mbps * 1e6 / (1500.0 * 8.0)
    }

    #[test]
    fn the_increase_follows_the_seeds_table_1_bands() {
        let inc = |mbps: f64| Daimd::increase(pps(mbps), 1500, IncreaseFloor::PerMss);
        assert!((inc(0.05) - 1.0 / 1500.0).abs() < 1e-12, "B <= 0.1 Mb/s: the floor 0.00067");
        assert!((inc(0.5) - 0.001).abs() < 1e-12);
        assert!((inc(0.9999) - 0.001).abs() < 1e-12);
        assert!((inc(1.0001) - 0.01).abs() < 1e-12);
        assert!((inc(5.0) - 0.01).abs() < 1e-12);
        assert!((inc(50.0) - 0.1).abs() < 1e-12);
        assert!((inc(500.0) - 1.0).abs() < 1e-12);
        assert!((inc(5000.0) - 10.0).abs() < 1e-9);
        assert_eq!(Daimd::increase(0.0, 1500, IncreaseFloor::PerMss), 1.0 / 1500.0);
        assert_eq!(Daimd::increase(-10.0, 1500, IncreaseFloor::Fixed001), 0.01, "UDT 4.11's floor");
        assert_eq!(Daimd::increase(pps(5.0), 1500, IncreaseFloor::Fixed001), 0.01);
    }

    fn after_slow_start(period_us: f64) -> Daimd {
        let mut cc = Daimd::new(DaimdConfig::default());
        cc.slow_start = false;
        cc.period_us = period_us;
        cc.last_dec_period = period_us;
        cc
    }

    #[test]
    fn one_packet_per_syn_more_moves_a_100_us_period_to_99_0099() {
        // 10 000 packets/s, capacity 1 Gbit/s: spare 0.1-1 Gbit/s, inc = 1
        // packet per SYN, i.e. 100 packets/s more (eq. 6).
        let mut cc = after_slow_start(100.0);
        cc.on_ack(500, &input(0, 10_000, 83_333));
        assert!((cc.period_us - 100.0 * 10_000.0 / (100.0 + 10_000.0)).abs() < 1e-9);
        assert!((1e6 / cc.period_us - 10_100.0).abs() < 1e-6);
        assert_eq!(cc.window, 10_000.0 / 1e6 * 110_000.0 + 16.0, "rate x (RTT + SYN) + 16");
    }

    #[test]
    fn rate_control_acts_at_most_once_per_syn() {
        let mut cc = after_slow_start(100.0);
        cc.on_ack(500, &input(millis(1), 10_000, 83_333));
        let once = cc.period_us;
        cc.on_ack(600, &input(millis(10), 10_000, 83_333));
        assert_eq!(cc.period_us, once, "9 ms later: ignored");
        cc.on_ack(700, &input(millis(11), 10_000, 83_333));
        assert!(cc.period_us < once);
    }

    #[test]
    fn the_spare_capacity_is_capped_at_a_ninth_above_the_last_decrease_period() {
        // Period 20 µs (50 000 pps) above the last decrease period 10 µs, capacity
        // 1e6 pps: spare 950 000 capped at 111 111 pps (1.33 Gbit/s): inc 10.
        let mut cc = after_slow_start(20.0);
        cc.last_dec_period = 10.0;
        cc.on_ack(1, &input(0, 50_000, 1_000_000));
        let inc = 10.0;
        assert!((cc.period_us - 20.0 * 10_000.0 / (20.0 * inc + 10_000.0)).abs() < 1e-9);
    }

    #[test]
    fn the_ninth_of_the_capacity_is_an_integer_division_as_in_udt() {
        // 4.11 caps B at `m_iBandwidth / 9` with both sides int: 750 001 / 9
        // = 83 333 packets/s, 999.996 Mbit/s of 1500-byte packets, so inc = 1.
        // Divided as a real number (83 333.4, 1.000001 Gbit/s) it would cross
        // into the next band, inc = 10.
        let mut cc = after_slow_start(10.0);
        cc.last_dec_period = 5.0;
        cc.on_ack(1, &input(0, 100_000, 750_001));
        assert!((cc.period_us - 10.0 * 10_000.0 / (10.0 * 1.0 + 10_000.0)).abs() < 1e-9, "{}", cc.period_us);
    }

    #[test]
    fn slow_start_grows_by_the_packets_acknowledged_and_ends_above_the_flow_window() {
        let mut cc = Daimd::new(DaimdConfig::default());
        cc.on_ack(99, &input(0, 0, 0));
        assert_eq!(cc.window, 16.0 + 101.0, "seqlen(-1, 99) counts both ends");
        assert_eq!(cc.period_us, 1.0);
        cc.on_ack(8200, &input(millis(10), 40_000, 80_000));
        assert!(!cc.in_slow_start());
        // The receive rate sets the period (25 µs), and the same step goes on
        // to the first increase, as in UDT: 40 000 packets/s spare, 480 Mbit/s,
        // inc = 1 packet per SYN.
        assert!((cc.period_us - 25.0 * 10_000.0 / (25.0 + 10_000.0)).abs() < 1e-9, "{}", cc.period_us);
    }

    #[test]
    fn a_nak_in_slow_start_only_ends_it_when_a_receive_rate_is_known() {
        let mut cc = Daimd::new(DaimdConfig::default());
        cc.on_loss(10, &input(0, 20_000, 80_000));
        assert!(!cc.in_slow_start());
        assert_eq!(cc.period_us, 50.0);
        assert_eq!(cc.decreases, 0);
        assert!(!cc.loss, "4.11 returns before marking the loss");
    }

    #[test]
    fn a_new_congestion_period_multiplies_the_period_by_1_125_rounded_up_and_skips_one_increase() {
        let mut cc = after_slow_start(100.0);
        cc.on_loss(1001, &input(0, 10_000, 83_333));
        assert_eq!(cc.period_us, (100.0f64 * 1.125).ceil());
        assert_eq!(cc.last_dec_seq, 1000, "the decrease point is the largest number sent");
        let p = cc.period_us;
        cc.on_ack(900, &input(millis(10), 10_000, 83_333));
        assert_eq!(cc.period_us, p, "no increase right after a NAK");
        cc.on_ack(950, &input(millis(20), 10_000, 83_333));
        assert!(cc.period_us < p);
    }

    #[test]
    fn at_most_five_decreases_per_congestion_period() {
        let mut cc = after_slow_start(100.0);
        // AvgNAKNum starts at 0, so DecRandom is 1: every NAK of the period
        // decreases until the fifth.
        cc.on_loss(1001, &input(0, 10_000, 83_333));
        for _ in 0..20 {
            cc.on_loss(900, &input(0, 10_000, 83_333));
        }
        assert_eq!(cc.decreases, 5);
        // A loss beyond the decrease point starts a new period.
        cc.on_loss(1500, &UdtCcInput { largest_sent: 2000, ..input(0, 10_000, 83_333) });
        assert_eq!(cc.decreases, 6);
    }

    #[test]
    fn every_dec_random_th_nak_decreases_and_the_nak_count_stops_with_the_fifth_decrease_chance() {
        let mut cc = after_slow_start(100.0);
        cc.on_loss(1001, &input(0, 10_000, 83_333));
        assert_eq!((cc.decreases, cc.nak_count, cc.dec_count), (1, 1, 1));
        cc.dec_random = 2;
        // NAKs 2..=5 of the period: NAKCount 2 and 4 decrease; from the
        // fifth on `DecCount++ < 5` fails first and NAKCount stays at 5.
        for _ in 0..10 {
            cc.on_loss(900, &input(0, 10_000, 83_333));
        }
        assert_eq!(cc.decreases, 3);
        assert_eq!(cc.nak_count, 5, "not 11: UDT's && short-circuits the count");
        // The next period averages that count: ceil(0.875 x 0 + 0.125 x 5) = 1.
        cc.on_loss(1500, &UdtCcInput { largest_sent: 2000, ..input(0, 10_000, 83_333) });
        assert_eq!(cc.avg_nak_num, 1);
        assert_eq!(cc.dec_random, 1, "ceil(1 x u) for u in (0, 1]");
    }

    #[test]
    fn dec_random_spaces_later_decreases_and_depends_only_on_the_decrease_point() {
        let mut cc = after_slow_start(100.0);
        cc.avg_nak_num = 0;
        cc.nak_count = 40; // as if the previous period had 40 NAKs
        cc.on_loss(1001, &input(0, 10_000, 83_333));
        assert_eq!(cc.avg_nak_num, 5, "ceil(0.875 x 0 + 0.125 x 40)");
        let expected = ((5.0 * Daimd::draw(1000)).ceil() as u32).max(1);
        assert_eq!(cc.dec_random, expected);
        assert!((1..=5).contains(&cc.dec_random));
        assert_eq!(Daimd::draw(1000), Daimd::draw(1000));
        assert_ne!(Daimd::draw(1000), Daimd::draw(1001));
    }

    #[test]
    fn the_rtt_banded_factor_replaces_1_125() {
        let bands = RttBands {
            low_edge: millis(50),
            high_edge: millis(150),
            low_factor: 1.120,
            mid_factor: 1.125,
            high_factor: 1.123,
        };
        let cfg = DaimdConfig { decrease: DecreaseRule::RttBanded(bands), ..DaimdConfig::default() };
        let mut cc = Daimd::new(cfg);
        cc.slow_start = false;
        cc.period_us = 1000.0;
        cc.on_loss(1001, &UdtCcInput { rtt_us: 25_000, ..input(0, 10_000, 83_333) });
        assert_eq!(cc.period_us, 1120.0);
    }

    #[test]
    fn prediction_keeps_or_scales_the_window_from_the_previous_rtt() {
        let p = Prediction { alpha: 1.5, beta: 3.5, unit_us: 1000.0, floor: 16.0 };
        let mut cc = Daimd::new(DaimdConfig { prediction: Some(p), ..DaimdConfig::default() });
        cc.slow_start = false;
        cc.period_us = 100.0;
        cc.window = 9000.0;
        // First step: no previous RTT, UDT's own window.
        cc.on_ack(1, &input(0, 80_000, 83_333));
        assert_eq!(cc.window, 80_000.0 / 1e6 * 110_000.0 + 16.0);
        // RTT 100 -> 104 ms with W = 8816: nDiff = 88.16 - 84.77 = 3.39: keep.
        let w = cc.window;
        cc.on_ack(2, &UdtCcInput { rtt_us: 104_000, ..input(millis(10), 80_000, 83_333) });
        assert_eq!(cc.window, w);
        // 104 -> 110 ms: nDiff = 84.77 - 80.15 = 4.6 > 3.5: 0.9 x rate x (RTT + SYN).
        cc.on_ack(3, &UdtCcInput { rtt_us: 110_000, ..input(millis(20), 80_000, 83_333) });
        assert!((cc.window - 0.9 * 80_000.0 / 1e6 * 120_000.0).abs() < 1e-9);
        // Stable RTT: nDiff 0 < alpha: 1.1 x.
        cc.on_ack(4, &UdtCcInput { rtt_us: 110_000, ..input(millis(30), 80_000, 83_333) });
        assert!((cc.window - 1.1 * 80_000.0 / 1e6 * 120_000.0).abs() < 1e-9);
        // One decision of each kind, published with the latest nDiff (0: the RTT did not move).
        let mut log = cclab_wire::MetricLog::default();
        cc.metrics(&mut cclab_wire::Metrics::new(&mut log));
        let names: Vec<&str> = PREDICTION_METRICS.iter().map(|d| d.name).collect();
        for name in &names {
            assert!(log.get(name).is_some(), "{name} published");
        }
        assert_eq!(
            ["window_decreases", "window_keeps", "window_increases", "n_diff"].map(|n| log.get(n)),
            [Some(1.0), Some(1.0), Some(1.0), Some(0.0)]
        );
    }

    #[test]
    fn native_udt_publishes_no_prediction_metrics() {
        let cc = Daimd::new(DaimdConfig::default());
        let mut log = cclab_wire::MetricLog::default();
        cc.metrics(&mut cclab_wire::Metrics::new(&mut log));
        assert!(METRICS.iter().all(|d| log.get(d.name).is_some()));
        assert_eq!(log.get("n_diff"), None);
    }

    #[test]
    fn a_timeout_only_ends_slow_start() {
        let mut cc = Daimd::new(DaimdConfig::default());
        cc.on_timeout(&input(0, 0, 0));
        assert!(!cc.in_slow_start());
        assert_eq!(cc.period_us, 110_000.0 / 16.0, "(RTT + SYN) / CWnd without a receive rate");
        let p = cc.period_us;
        cc.on_timeout(&input(0, 0, 0));
        assert_eq!(cc.period_us, p);
    }
}
