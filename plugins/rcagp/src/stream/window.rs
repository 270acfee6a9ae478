//! The block-FIFO window (spec §6.2): `blocks` slots of `block_size` admitted samples, each a
//! time-contiguous group, plus the open block being filled. A full open block goes to the
//! next free slot, or replaces the oldest block once all slots are in use.
//!
//! Every sample keeps its raw input, targets, per-output base noise variance ν, time stamp
//! (seconds) and its weight centre γ and threshold widening v (per output), so that the
//! per-point noise and weights can be recomputed at any rebuild (e.g. with new
//! hyperparameters, or a noise that grows with the sample's age). All buffers are allocated
//! once.

/// One sample as handed to the window.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SampleRef<'a> {
    pub x: &'a [f64],
    pub y: &'a [f64],
    pub noise: &'a [f64],
    pub t_secs: f64,
    pub center: &'a [f64],
    pub cvar: &'a [f64],
}

/// Per-sample arrays for `rows` samples.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Rows {
    pub x: Vec<f64>,
    pub y: Vec<f64>,
    pub noise: Vec<f64>,
    pub t: Vec<f64>,
    pub center: Vec<f64>,
    pub cvar: Vec<f64>,
}

impl Rows {
    fn new(rows: usize, d: usize, p: usize) -> Self {
        Self {
            x: vec![0.0; rows * d],
            y: vec![0.0; rows * p],
            noise: vec![0.0; rows * p],
            t: vec![0.0; rows],
            center: vec![0.0; rows * p],
            cvar: vec![0.0; rows * p],
        }
    }

    fn write(&mut self, row: usize, d: usize, p: usize, s: &SampleRef<'_>) {
        self.x[row * d..(row + 1) * d].copy_from_slice(s.x);
        self.y[row * p..(row + 1) * p].copy_from_slice(s.y);
        self.noise[row * p..(row + 1) * p].copy_from_slice(s.noise);
        self.t[row] = s.t_secs;
        self.center[row * p..(row + 1) * p].copy_from_slice(s.center);
        self.cvar[row * p..(row + 1) * p].copy_from_slice(s.cvar);
    }

    /// Copies `count` rows from `src` (starting at row 0) to rows `at..at+count`.
    fn copy_rows(&mut self, at: usize, src: &Rows, count: usize, d: usize, p: usize) {
        self.x[at * d..(at + count) * d].copy_from_slice(&src.x[..count * d]);
        self.y[at * p..(at + count) * p].copy_from_slice(&src.y[..count * p]);
        self.noise[at * p..(at + count) * p].copy_from_slice(&src.noise[..count * p]);
        self.t[at..at + count].copy_from_slice(&src.t[..count]);
        self.center[at * p..(at + count) * p].copy_from_slice(&src.center[..count * p]);
        self.cvar[at * p..(at + count) * p].copy_from_slice(&src.cvar[..count * p]);
    }
}

/// The window's storage. See the module doc.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Window {
    pub d: usize,
    pub p: usize,
    pub block_size: usize,
    pub blocks: usize,
    /// Slot-major samples (slot a holds rows a·k_b .. (a+1)·k_b).
    pub rows: Rows,
    /// Action entries of every slot's samples.
    pub s: Vec<f64>,
    /// Block id of each slot (ids increase with insertion).
    pub ids: Vec<u64>,
    /// Slots in use; slots 0..filled are active (filled in order, then replaced in place).
    pub filled: usize,
    /// The slot the next full block replaces once all are in use (the oldest).
    pub next_slot: usize,
    pub next_id: u64,
    /// The open block.
    pub open: Rows,
    pub open_len: usize,
}

impl Window {
    /// **Allocates** every buffer.
    pub fn new(d: usize, p: usize, blocks: usize, block_size: usize) -> Self {
        let n = blocks * block_size;
        Self {
            d,
            p,
            block_size,
            blocks,
            rows: Rows::new(n, d, p),
            s: vec![0.0; n],
            ids: vec![u64::MAX; blocks],
            filled: 0,
            next_slot: 0,
            next_id: 0,
            open: Rows::new(block_size, d, p),
            open_len: 0,
        }
    }

    /// Points in the active slots.
    pub fn n_points(&self) -> usize {
        self.filled * self.block_size
    }

    /// Appends a sample to the open block; true when the block is now full. No allocation.
    pub fn push_open(&mut self, s: &SampleRef<'_>) -> bool {
        self.open.write(self.open_len, self.d, self.p, s);
        self.open_len += 1;
        self.open_len == self.block_size
    }

    /// The slot a full open block goes to (without changing anything).
    pub fn target_slot(&self) -> usize {
        if self.filled < self.blocks {
            self.filled
        } else {
            self.next_slot
        }
    }

    /// Moves the full open block into its slot with action entries `s_new` (k_b); returns
    /// the slot. No allocation.
    pub fn commit_open(&mut self, s_new: &[f64]) -> usize {
        debug_assert_eq!(self.open_len, self.block_size);
        let slot = self.target_slot();
        let kb = self.block_size;
        self.rows
            .copy_rows(slot * kb, &self.open, kb, self.d, self.p);
        self.s[slot * kb..(slot + 1) * kb].copy_from_slice(s_new);
        self.ids[slot] = self.next_id;
        self.next_id += 1;
        if self.filled < self.blocks {
            self.filled += 1;
        } else {
            self.next_slot = (self.next_slot + 1) % self.blocks;
        }
        self.open_len = 0;
        slot
    }
}
