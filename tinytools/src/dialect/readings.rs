//! What [`read_value`] would find at every `{` and `[` of a reply — nothing, an object or an
//! array, and where it ends — answered by [`Readings`] in work linear in the reply: a container
//! is read once, however many readings start inside it, and what it turned out to be is
//! remembered.

use std::cell::OnceCell;
use std::collections::VecDeque;

use rustc_hash::FxHashMap;
use serde_json::Value;

#[cfg(doc)]
use super::relaxed_json::read_value;
use super::relaxed_json::{MAX_DEPTH, Marks, literal_len, number_len, skip_step, string_end, work};

/// The most containers a value [`read_value`] returns can nest: serde_json refuses a value
/// whose nesting reaches its limit (the strict reading, and the relaxed reading's output).
const MAX_LEVELS: usize = MAX_DEPTH - 1;

/// [`Readings`] reads at most this many bytes per byte of the reply (plus
/// [`READ_BUDGET_SLACK`]); once it has, no further reading starts, and the rest of the reply's
/// JSON is text. A reply's bytes are read about once each to find where its values end (twice
/// where readings start inside strings); 12,000 generated replies built of brackets, quotes,
/// comments and escapes to make readings overlap came to at most 5, so no real reply comes near.
pub(super) const READ_BUDGET_PER_BYTE: usize = 16;

/// What [`Readings`] may read beyond [`READ_BUDGET_PER_BYTE`] per byte, for short replies.
const READ_BUDGET_SLACK: usize = 64 * 1024;

/// What [`read_value`] finds at a `{` or `[`, known without building the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Reading {
    /// No JSON value starts there.
    Nothing,
    /// An object, ending at byte `end` of the reply.
    Object {
        /// Where it ends (exclusive).
        end: usize,
    },
    /// An array, ending at byte `end` of the reply.
    Array {
        /// Where it ends (exclusive).
        end: usize,
        /// Every element is an object (an empty array too): only such an array can be a list
        /// of calls.
        objects_only: bool,
    },
}

/// A container a reading closed: where it ends and what it holds.
#[derive(Clone, Copy, Debug)]
struct Closed {
    end: usize,
    /// Its nesting, itself included (1 for `{}`).
    levels: usize,
    object: bool,
    objects_only: bool,
}

impl Closed {
    /// What [`read_value`] finds at its start.
    fn reading(self) -> Reading {
        if self.object {
            Reading::Object { end: self.end }
        } else {
            Reading::Array { end: self.end, objects_only: self.objects_only }
        }
    }
}

/// What [`read_value`] finds at each `{` and `[` of one reply, in work linear in the reply.
///
/// A reading walks forward from its start and settles every container it opens: one that
/// closes is remembered with its end, one still open where the reading fails is remembered as
/// failing — a reading starting there would meet the same failure. A later reading that meets
/// a settled container jumps over it, and a start inside a settled container is answered
/// without reading. Nesting past serde_json's limit fails only the outermost container: the
/// walk goes on for the ones inside it, which have the room. Readings that start inside
/// comments (commented-out code, `// {` at the end of each line) meet again after a comment;
/// how a container went on from there is remembered too. So a byte is read again only by a
/// reading that starts inside a string of an earlier one; the total is capped by
/// [`READ_BUDGET_PER_BYTE`].
pub(super) struct Readings<'a> {
    text: &'a str,
    marks: &'a OnceCell<Marks>,
    closed: FxHashMap<usize, Closed>,
    /// How a container of a kind (object or not) goes on from a place after a comment.
    continuations: FxHashMap<(usize, Place, bool), Continuation>,
    /// A bit per byte: a container opens there and no value can be read from it.
    failed: Vec<u64>,
    read: usize,
    budget: usize,
    /// The open containers' stack, kept between readings (empty between them).
    stack: VecDeque<Frame>,
}

impl<'a> Readings<'a> {
    /// Nothing read yet; `marks` is shared with [`read_value`] calls on the same reply.
    pub(super) fn new(text: &'a str, marks: &'a OnceCell<Marks>) -> Self {
        let budget = text.len().saturating_mul(READ_BUDGET_PER_BYTE).saturating_add(READ_BUDGET_SLACK);
        Self {
            text,
            marks,
            closed: FxHashMap::default(),
            continuations: FxHashMap::default(),
            failed: Vec::new(),
            read: 0,
            budget,
            stack: VecDeque::new(),
        }
    }

    /// What [`read_value`] finds at byte `start`; [`Reading::Nothing`] at anything but `{` or
    /// `[`, and for every start once the budget is spent.
    pub(super) fn at(&mut self, start: usize) -> Reading {
        if let Some(closed) = self.closed.get(&start) {
            return closed.reading();
        }
        let opens = matches!(self.text.as_bytes().get(start), Some(b'{' | b'['));
        if !opens || self.has_failed(start) || self.read > self.budget {
            return Reading::Nothing;
        }
        let open = std::mem::take(&mut self.stack);
        Scan { readings: self, root: start, at: start, open, jumped: 0, found: Reading::Nothing }.run()
    }

    /// Whether a container opening at `start` is known to fail.
    fn has_failed(&self, start: usize) -> bool {
        self.failed.get(start / 64).is_some_and(|word| word >> (start % 64) & 1 == 1)
    }

    /// Remembers that a container opening at `start` fails.
    fn set_failed(&mut self, start: usize) {
        if self.failed.is_empty() {
            self.failed = vec![0; self.text.len() / 64 + 1];
        }
        if let Some(word) = self.failed.get_mut(start / 64) {
            *word |= 1 << (start % 64);
        }
    }
}

/// A container a [`Scan`] has open.
#[derive(Clone, Debug)]
struct Frame {
    start: usize,
    object: bool,
    /// The deepest nesting among the containers closed inside it so far.
    levels_inside: usize,
    objects_only: bool,
    /// The places after a comment it passed, in order.
    checkpoints: Vec<Checkpoint>,
}

impl Frame {
    /// The byte that closes it.
    fn close_byte(&self) -> u8 {
        if self.object { b'}' } else { b']' }
    }

    /// Notes elements: containers up to `levels` deep (0 for a scalar), all objects or not.
    fn holds(&mut self, levels: usize, objects: bool) {
        self.levels_inside = self.levels_inside.max(levels);
        self.objects_only &= objects;
        if let Some(last) = self.checkpoints.last_mut() {
            last.levels = last.levels.max(levels);
            last.objects_only &= objects;
        }
    }
}

/// Where a [`Scan`] is between the tokens of the innermost open container.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Place {
    /// Just inside the container or after a comma: an element (an object's key) or the close.
    Slot,
    /// After an object's key: its `:`.
    AfterKey,
    /// After an object's `:`: the value.
    AfterColon,
    /// After an element: a comma or the close.
    AfterValue,
}

/// How a container goes on from a place after a comment.
#[derive(Clone, Copy, Debug)]
enum Continuation {
    /// It closes at `end`; its elements from there nest `levels` deep, and are all objects
    /// when `objects_only`.
    Closes { end: usize, levels: usize, objects_only: bool },
    /// The reading fails before it closes.
    Fails,
}

/// A place after a comment a container passed, and what its elements from there hold so far.
#[derive(Clone, Copy, Debug)]
struct Checkpoint {
    at: usize,
    place: Place,
    levels: usize,
    objects_only: bool,
}

/// One reading from a start nothing has settled yet: it goes on until no container is open.
struct Scan<'r, 'a> {
    readings: &'r mut Readings<'a>,
    root: usize,
    at: usize,
    /// The containers open, outermost first.
    open: VecDeque<Frame>,
    /// Bytes jumped over: settled containers, comments.
    jumped: usize,
    /// The root's reading, once it closes.
    found: Reading,
}

impl Scan<'_, '_> {
    /// Reads, settles what is left open when the reading fails, counts the bytes read, and
    /// gives the root's reading.
    fn run(mut self) -> Reading {
        if self.walk().is_none() {
            while let Some(frame) = self.open.pop_front() {
                for checkpoint in &frame.checkpoints {
                    let key = (checkpoint.at, checkpoint.place, frame.object);
                    self.readings.continuations.insert(key, Continuation::Fails);
                }
                self.fail(frame.start);
            }
        }
        let read = self.at.saturating_sub(self.root + self.jumped);
        self.readings.read += read;
        work::charge(read);
        self.readings.stack = std::mem::take(&mut self.open);
        self.found
    }

    /// Reads until no container is open; `None` where the reading fails.
    fn walk(&mut self) -> Option<()> {
        self.value()?;
        let mut place = Place::Slot;
        loop {
            let Some((close, object)) = self.open.back().map(|frame| (frame.close_byte(), frame.object)) else {
                return Some(());
            };
            if !self.skip(place)? {
                place = Place::AfterValue;
                continue;
            }
            let byte = *self.readings.text.as_bytes().get(self.at)?;
            place = match place {
                Place::Slot | Place::AfterValue if byte == close => {
                    self.at += 1;
                    self.close();
                    Place::AfterValue
                }
                Place::Slot if object => {
                    if byte != b'"' {
                        return None;
                    }
                    self.string()?;
                    Place::AfterKey
                }
                Place::AfterKey if byte == b':' => {
                    self.at += 1;
                    Place::AfterColon
                }
                Place::Slot | Place::AfterColon => self.value()?,
                Place::AfterValue if byte == b',' => {
                    self.at += 1;
                    Place::Slot
                }
                Place::AfterKey | Place::AfterValue => return None,
            };
        }
    }

    /// Skips whitespace and comments. After each comment, the reading may stand where an
    /// earlier one stood, at the same place in the same kind of container: the innermost
    /// container then goes on as that one did (`false`: it closed, and the reading is past
    /// it). Otherwise the place is noted for the readings to come.
    fn skip(&mut self, place: Place) -> Option<bool> {
        loop {
            let (end, comment) = skip_step(self.readings.text, self.at, self.readings.marks)?;
            self.at = end;
            let Some(comment) = comment else {
                return Some(true);
            };
            self.jumped += end - comment - 2;
            let Some(frame) = self.open.back_mut() else {
                return Some(true);
            };
            match self.readings.continuations.get(&(end, place, frame.object)).copied() {
                None => frame.checkpoints.push(Checkpoint { at: end, place, levels: 0, objects_only: true }),
                Some(Continuation::Fails) => return None,
                Some(Continuation::Closes { end: close, levels, objects_only }) => {
                    frame.holds(levels, objects_only);
                    self.make_room(levels);
                    self.jumped += close - end - 1;
                    self.at = close;
                    self.close();
                    return Some(false);
                }
            }
        }
    }

    /// The value at `self.at`: a scalar is read whole, a settled container jumped over, and a
    /// new container opened ([`Place::Slot`]).
    fn value(&mut self) -> Option<Place> {
        let text = self.readings.text;
        match *text.as_bytes().get(self.at)? {
            b'{' | b'[' => return self.container(),
            b'"' => self.string()?,
            b'-' | b'0'..=b'9' => {
                let len = number_len(text, self.at);
                serde_json::from_str::<Value>(&text[self.at..self.at + len]).ok()?;
                self.at += len;
            }
            _ => self.at += literal_len(text, self.at)?,
        }
        if let Some(frame) = self.open.back_mut() {
            frame.holds(0, false);
        }
        Some(Place::AfterValue)
    }

    /// A string, checked as serde_json would check it.
    fn string(&mut self) -> Option<()> {
        let text = self.readings.text;
        let (end, special) = string_end(text, self.at)?;
        if special {
            serde_json::from_str::<String>(&text[self.at..end]).ok()?;
            work::charge(end - self.at);
        }
        self.at = end;
        Some(())
    }

    /// The container at `self.at`: settled (jumped over, or the reading fails) or opened.
    fn container(&mut self) -> Option<Place> {
        let start = self.at;
        if let Some(closed) = self.readings.closed.get(&start).copied() {
            self.make_room(closed.levels);
            self.jumped += closed.end - start - 1;
            self.at = closed.end;
            if let Some(frame) = self.open.back_mut() {
                frame.holds(closed.levels, closed.object);
            }
            return Some(Place::AfterValue);
        }
        if self.readings.has_failed(start) {
            return None;
        }
        self.make_room(1);
        let object = self.readings.text.as_bytes().get(start) == Some(&b'{');
        self.open.push_back(Frame { start, object, levels_inside: 0, objects_only: true, checkpoints: Vec::new() });
        self.at += 1;
        Some(Place::Slot)
    }

    /// Closes the innermost container, its closing byte just read: remembers it, and how it
    /// went on from each place after a comment it passed.
    fn close(&mut self) {
        let Some(frame) = self.open.pop_back() else {
            return;
        };
        let end = self.at;
        let (mut levels, mut objects_only) = (0, true);
        for checkpoint in frame.checkpoints.iter().rev() {
            levels = levels.max(checkpoint.levels);
            objects_only &= checkpoint.objects_only;
            let key = (checkpoint.at, checkpoint.place, frame.object);
            self.readings.continuations.insert(key, Continuation::Closes { end, levels, objects_only });
        }
        let closed =
            Closed { end, levels: frame.levels_inside + 1, object: frame.object, objects_only: frame.objects_only };
        if frame.start == self.root {
            self.found = closed.reading();
        } else {
            self.readings.closed.insert(frame.start, closed);
        }
        if let Some(parent) = self.open.back_mut() {
            parent.holds(closed.levels, closed.object);
        }
    }

    /// Fails the outermost open containers until `levels` more fit under serde_json's limit:
    /// each of them, read on its own, would nest too deep here. (How they would have gone on
    /// from their places after comments is not known: that is not remembered.)
    fn make_room(&mut self, levels: usize) {
        while self.open.len() + levels > MAX_LEVELS {
            match self.open.pop_front() {
                Some(frame) => self.fail(frame.start),
                None => return,
            }
        }
    }

    /// Remembers that the container at `start` fails (the root's failure is the reading's).
    fn fail(&mut self, start: usize) {
        if start != self.root {
            self.readings.set_failed(start);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::relaxed_json::read_value;

    /// What [`read_value`] reads at `at`, as a [`Reading`].
    fn expected(text: &str, at: usize) -> Reading {
        match read_value(text, at, &OnceCell::new()) {
            None => Reading::Nothing,
            Some((Value::Object(_), len)) => Reading::Object { end: at + len },
            Some((Value::Array(items), len)) => {
                Reading::Array { end: at + len, objects_only: items.iter().all(Value::is_object) }
            }
            Some((other, _)) => panic!("a value read at a brace or bracket: {other}"),
        }
    }

    /// The starts of `text`, every `{` and `[`.
    fn starts(text: &str) -> Vec<usize> {
        text.match_indices(['{', '[']).map(|(at, _)| at).collect()
    }

    /// Checks [`Readings`] against [`read_value`] at every start, asked first to last, then
    /// last to first (later readings settle what earlier ones then jump over).
    fn agree(text: &str) {
        let starts = starts(text);
        let marks = OnceCell::new();
        let mut readings = Readings::new(text, &marks);
        for &at in &starts {
            assert_eq!(readings.at(at), expected(text, at), "at {at} of {text:?}");
        }
        let mut readings = Readings::new(text, &marks);
        for &at in starts.iter().rev() {
            assert_eq!(readings.at(at), expected(text, at), "at {at} of {text:?}, last to first");
        }
    }

    /// A small deterministic generator (xorshift).
    struct Draw(u64);

    impl Draw {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }

        fn pick<'t>(&mut self, items: &[&'t str]) -> &'t str {
            items[self.below(items.len())]
        }

        /// JSON as small models write it, with comments, trailing commas and now and then a
        /// mistake.
        fn value(&mut self, depth: usize, out: &mut String) {
            const SCALARS: [&str; 12] = [
                "1",
                "-2.5e3",
                "0",
                "01",
                "1e999",
                "true",
                "nul",
                "null",
                "\"a\"",
                "\"\\u00e9\"",
                "\"\\ud800\"",
                "\"\\x\"",
            ];
            const GAPS: [&str; 13] =
                ["", "", "", " ", "\n", "/* c */", "// c\n", "/*", "\t", "// [\n", "// {\"k\":\n", "/* [{ */", "//"];
            if depth > 4 || self.below(3) == 0 {
                out.push_str(self.pick(&SCALARS));
                return;
            }
            let object = self.below(2) == 0;
            out.push(if object { '{' } else { '[' });
            for i in 0..self.below(4) {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(self.pick(&GAPS));
                if object {
                    out.push_str(self.pick(&["\"k\"", "\"name\"", "k", "\"\t\""]));
                    out.push_str(self.pick(&[":", ": ", " :", ""]));
                }
                self.value(depth + 1, out);
                out.push_str(self.pick(&GAPS));
            }
            out.push_str(self.pick(&["", "", "", ",", ",,"]));
            if self.below(8) > 0 {
                out.push(if object { '}' } else { ']' });
            }
        }
    }

    #[test]
    fn readings_agree_with_read_value_on_json_and_near_misses() {
        let mut draw = Draw(0x5eed_1234_abcd_0042);
        for _ in 0..4_000 {
            let mut text = String::new();
            for _ in 0..1 + draw.below(3) {
                text.push_str(draw.pick(&["", "x ", "\"", "[", "{", "\n", "/*", "}", "]", "// [", "// {"]));
                draw.value(0, &mut text);
            }
            agree(&text);
        }
    }

    #[test]
    fn readings_agree_with_read_value_on_arbitrary_text() {
        const PIECES: [&str; 24] = [
            "{", "}", "[", "]", "\"", ",", ":", " ", "\n", "1", "-", "e", "true", "nul", "/*", "*/", "//", "\\",
            "\\\"", "a", "\"k\"", "\u{1}", "é", "/",
        ];
        let mut draw = Draw(0x0dd_ba11_cafe_f00d);
        for _ in 0..6_000 {
            let text: String = (0..draw.below(40)).map(|_| draw.pick(&PIECES)).collect();
            agree(&text);
        }
    }

    #[test]
    fn readings_nest_exactly_as_deep_as_read_value() {
        for levels in [1, 2, MAX_LEVELS - 1, MAX_LEVELS, MAX_LEVELS + 1, MAX_DEPTH + 1, 300] {
            for inner in ["", "1", "/**/", "1,"] {
                agree(&format!("{}{inner}{}", "[".repeat(levels), "]".repeat(levels)));
                agree(&format!("{}{inner}{}", "[".repeat(levels), "]".repeat(levels / 2)));
                agree(&format!("{}1{}", "{\"a\":[".repeat(levels / 2), "]}".repeat(levels / 2)));
            }
        }
        let deepest = format!("{}{}", "[".repeat(MAX_LEVELS), "]".repeat(MAX_LEVELS));
        assert!(read_value(&deepest, 0, &OnceCell::new()).is_some());
        let too_deep = format!("[{deepest}]");
        assert!(read_value(&too_deep, 0, &OnceCell::new()).is_none(), "serde_json's limit");
        assert!(read_value(&too_deep, 1, &OnceCell::new()).is_some());
    }

    #[test]
    fn once_the_budget_is_spent_nothing_more_is_read() {
        let text = "[1] [2] {\"a\": [3]} [4]";
        let marks = OnceCell::new();
        let mut readings = Readings::new(text, &marks);
        readings.budget = 5;
        assert_eq!(readings.at(0), Reading::Array { end: 3, objects_only: false });
        assert_eq!(readings.at(4), Reading::Array { end: 7, objects_only: false }, "5 bytes read is not past it");
        assert_eq!(readings.at(8), Reading::Nothing);
        assert_eq!(readings.at(19), Reading::Nothing);
        assert!(read_value(text, 19, &marks).is_some(), "a value, taken for text");
    }

    /// The work of reading every start of `text`, first to last, per byte of it.
    fn work_per_byte(text: &str) -> f64 {
        let marks = OnceCell::new();
        let mut readings = Readings::new(text, &marks);
        work::take();
        for at in starts(text) {
            readings.at(at);
        }
        work::take() as f64 / text.len() as f64
    }

    /// Counted, not timed: the bytes read (the comments' marks included), per byte.
    #[test]
    fn reading_every_start_of_a_long_reply_reads_each_byte_about_once() {
        for unit in [
            "[",
            "{",
            "[{",
            "{\"a\":",
            "[1,",
            "{\"a\": [1, {\"b\": [2, ",
            "[\"a\", ",
            "[[1], [2], {\"c\": []}], ",
            "[\",[\",",
            "{}",
            "[1, 2] ",
            "[\"[\", \"{\", \"/*\", ",
            // Readings that start inside comments and meet again after them.
            "// {\n",
            "[1, // [\n",
            "{\"a\": 1, /* { */ ",
        ] {
            let text = unit.repeat(500_000 / unit.len());
            let work = work_per_byte(&text);
            assert!(work <= 3.0, "{unit:?}: {work:.2} bytes read per byte");
        }
    }
}
