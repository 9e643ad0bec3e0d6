//! What a sending application offers a transport: the same three kinds for
//! every protocol.

/// What the sending application offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum App {
    /// An infinite backlog (FTP-like bulk transfer).
    Bulk,
    /// A finite transfer of this many bytes.
    Transfer { bytes: u64 },
    /// Whatever the application writes (`Control::AppWrite`) until it closes
    /// (`Control::AppClose`); only whole segments leave before the close.
    Stream,
}
