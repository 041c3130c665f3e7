package io.auditpipe.flink.alerts;

import io.auditpipe.enrich.EventTaxonomy;
import io.auditpipe.flink.functions.WriteBackOperator;
import io.auditpipe.flink.records.DeadLetter;
import io.auditpipe.parser.AuditEvent;
import io.auditpipe.parser.RecordNumbers;
import java.time.Instant;
import java.util.List;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * {@code record_gap}: a record missing from a server's own record sequence (PCI DSS 10.2.1.6 and
 * tamper evidence): Percona's numbered records ({@link RecordNumbers}). Keyed by server and startup
 * time (one sequence per start). Each alert is classified ({@link GapClass}).
 *
 * <p>The sequence starts at the first record seen; when that is the plugin's start record, number
 * 1, the numbering started again ({@link GapClass#RESTART}, low). A record that arrives above the
 * next expected number waits: the missing ones may still come, out of order. When the watermark has
 * passed the waiting record's event time by {@code recordGapGrace} and the numbers below it are
 * still missing, the gap is alerted (once: the id is the server, sequence and first missing number)
 * and the sequence goes on from the waiting record. A line the job could not read whose record id
 * is still legible ({@link RecordNumbers#inLine}) arrives here as a dead-lettered number: a gap of
 * such numbers only is {@link GapClass#DEAD_LETTER} (medium) and names the dead letters. The
 * collector's report of lines it lost arrives as the number of the last line it shipped before them
 * ({@link Numbered#lostAfter}): a gap that begins right after that number is {@link
 * GapClass#COLLECTOR_LOSS} (high). Any other is {@link GapClass#UNEXPLAINED} (high).
 *
 * <p>A sequence whose first record to arrive is above number 1 opens for the grace of that record:
 * lower numbers may still come (a catch-up ships the rotated files after the live file's newer
 * lines). What arrives below it then is the sequence's beginning, its gaps alerted as any other and
 * its start record's restart too. A dead letter that is the first line of a sequence to arrive
 * opens it until its first record arrives ({@link #UNTIL_A_RECORD}). Each sequence's lowest number
 * is told to {@link SequenceStarts} ({@link #NOTICES}, with the collector's reports of lost lines),
 * which knows the server's earlier sequences: the beginning of a sequence missing after an earlier
 * one is a gap too.
 */
public class RecordGaps extends KeyedProcessFunction<String, RecordGaps.Numbered, Alert>
        implements WriteBackOperator.WritesBack<String> {
    private static final long serialVersionUID = 1L;
    public static final String RULE = AlertRule.RECORD_GAP.id;

    private final AlertSettings settings;

    /** Each sequence as of the last checkpoint ({@link #sequences} holds it since). */
    private transient ValueState<Sequence> sequence;

    /**
     * The sequences seen since the last checkpoint, written into {@link #sequence} before the next
     * one ({@link WriteBackOperator}: every numbered record changes its sequence).
     */
    private transient java.util.Map<String, Sequence> sequences;

    public RecordGaps(AlertSettings settings) {
        this.settings = settings;
    }

    /**
     * What this rule tells {@link SequenceStarts}: each sequence's lowest number, the collector's
     * reports of lost lines, and those reports a gap of their sequence took.
     */
    public static final org.apache.flink.util.OutputTag<SequenceStarts.Notice> NOTICES =
            new org.apache.flink.util.OutputTag<>(
                    "record-sequence-notices",
                    org.apache.flink.api.common.typeinfo.TypeInformation.of(
                            SequenceStarts.Notice.class));

    /**
     * Most dead-lettered numbers a sequence keeps (those at or above its next number); past it a
     * gap counts as unexplained.
     */
    public static final int MAX_DEAD_LETTERED = 1000;

    /**
     * The state of one sequence: the next number expected, the records above it that wait, and
     * dead-lettered numbers.
     */
    public static class Sequence implements java.io.Serializable {
        private static final long serialVersionUID = 1L;
        public long next;
        public TimedEntries waiting =
                new TimedEntries(); // time = event time, id = event id, subject = number

        /**
         * Numbers at or above {@link #next} whose lines became dead letters: time = when shipped,
         * id = the dead letter's id, subject = number.
         */
        public TimedEntries deadLettered = new TimedEntries();

        /**
         * Numbers after which the collector lost lines (its report's dead letter): time = when
         * shipped, id = the dead letter's id, subject = number.
         */
        public TimedEntries lostAfter = new TimedEntries();

        /**
         * Whether the sequence opens: its first record arrived above number 1, and lower ones may
         * still come ({@link #head}).
         */
        public boolean opening;

        /**
         * The event time at which the sequence stops opening: its first record's time plus the
         * grace.
         */
        public long openUntil;

        /**
         * While the sequence opens, the numbers of its first record and of the records below it, as
         * runs.
         */
        public Runs head = new Runs();

        /** Whether the audit plugin's start record is in {@link #head}. */
        public boolean headStart;

        public Sequence() {}
    }

    /**
     * Numbers as runs of consecutive numbers, each with the id and event time of its lowest record:
     * a sequence's beginning, which arrives in order as a rule (a catch-up ships the rotated files
     * oldest first), is a run or a few however many records it holds. At most {@link
     * #MAX_DEAD_LETTERED} runs.
     */
    public static class Runs implements java.io.Serializable {
        private static final long serialVersionUID = 1L;
        public List<Long> lows = new java.util.ArrayList<>();
        public List<Long> highs = new java.util.ArrayList<>();
        public List<String> ids = new java.util.ArrayList<>();
        public List<Long> times = new java.util.ArrayList<>();

        public Runs() {}

        public int size() {
            return lows.size();
        }

        /** The highest number held; Long.MIN_VALUE when none. */
        public long highest() {
            return highs.isEmpty() ? Long.MIN_VALUE : highs.get(highs.size() - 1);
        }

        /**
         * Adds number {@code n} of record {@code id} at {@code time}: extends a run, joins two, or
         * starts one (unless there are too many).
         */
        public void add(long n, String id, long time) {
            int i = 0;
            while (i < lows.size() && highs.get(i) < n - 1)
                i++; // the first run that n can touch, or where it goes
            if (i < lows.size() && lows.get(i) <= n && n <= highs.get(i))
                return; // held already: a copy
            if (i < lows.size() && highs.get(i) == n - 1) {
                highs.set(i, n);
                if (i + 1 < lows.size() && lows.get(i + 1) == n + 1) { // joins the next run
                    highs.set(i, highs.get(i + 1));
                    removeRun(i + 1);
                }
            } else if (i < lows.size() && lows.get(i) == n + 1) {
                lows.set(i, n);
                ids.set(i, id);
                times.set(i, time);
            } else if (lows.size() < MAX_DEAD_LETTERED) {
                lows.add(i, n);
                highs.add(i, n);
                ids.add(i, id);
                times.add(i, time);
            }
        }

        private void removeRun(int i) {
            lows.remove(i);
            highs.remove(i);
            ids.remove(i);
            times.remove(i);
        }
    }

    /**
     * What the rule needs of a numbered record: this, not the whole event, crosses the shuffle to
     * the rule (a POJO Flink serializes field by field).
     */
    public static class Numbered implements java.io.Serializable {
        private static final long serialVersionUID = 1L;

        /** The sequence: server, NUL, the plugin's startup time ({@link #sequenceKey}). */
        public String sequence;

        public long number;

        /** The event's id, or for a dead-lettered number the dead letter's id. */
        public String id;

        public long eventTimeMillis;

        /** Whether the record is the audit plugin's start record. */
        public boolean start;

        /** Whether the number's line became a dead letter ({@link #deadLettered}). */
        public boolean deadLetter;

        /**
         * Whether the collector reports lines lost after this number, the last it shipped before
         * them (with {@link #deadLetter}).
         */
        public boolean lostAfter;

        public Numbered() {}
    }

    /** A Percona record's place in its sequence, or null for records without one. */
    public static Numbered numbered(AuditEvent e) {
        long number = RecordNumbers.number(e);
        if (number == RecordNumbers.NONE) return null;
        Numbered r = new Numbered();
        r.sequence = sequenceKey(e);
        r.number = number;
        r.id = e.id;
        r.eventTimeMillis = e.eventTimeMillis;
        r.start =
                EventTaxonomy.AUDIT_SYSTEM.equals(e.category)
                        && EventTaxonomy.AUDIT_START.equals(e.action);
        return r;
    }

    /**
     * A dead letter's place in its server's sequence: the number of the Percona record id its line
     * still shows, or null (no server known, no legible id, or a stage whose record is stored after
     * all: a late one for the stats, a copy that collided). The collector's report of lost lines is
     * the number of the last line it shipped before them, marked {@link Numbered#lostAfter}.
     */
    public static Numbered deadLettered(DeadLetter d) {
        if (d.server == null
                || !(DeadLetter.STAGE_PARSE.equals(d.stage)
                        || DeadLetter.STAGE_COLLECT.equals(d.stage))) return null;
        RecordNumbers.Numbered n = RecordNumbers.inLine(d.originalValue);
        if (n == null) return null;
        Numbered r = new Numbered();
        r.sequence = d.server + "\u0000" + n.startup();
        r.number = n.number();
        r.id = d.id;
        r.eventTimeMillis = d.origin == null ? d.detectedAtMillis : d.origin.timestampMillis;
        r.deadLetter = true;
        r.lostAfter = DeadLetter.STAGE_COLLECT.equals(d.stage) && reportsLoss(d.originalKey);
        return r;
    }

    /** Whether a collector's message key reports lost lines (its {@code lost} object). */
    private static boolean reportsLoss(byte[] key) {
        try {
            return io.auditpipe.parser.SourceDescriptor.parseKey(key).lost() != null;
        } catch (io.auditpipe.parser.SourceDescriptor.InvalidSourceKeyException e) {
            return false;
        }
    }

    /**
     * The key of a Percona record's sequence (server and startup time), or null for records without
     * one.
     */
    public static String sequenceKey(AuditEvent e) {
        String startup = RecordNumbers.startup(e);
        return startup == null ? null : e.server + "\u0000" + startup;
    }

    @Override
    public void open(OpenContext context) {
        sequence =
                getRuntimeContext()
                        .getState(new ValueStateDescriptor<>("record-sequence", Sequence.class));
        sequences = new java.util.HashMap<>();
    }

    @Override
    public void processElement(Numbered e, Context ctx, Collector<Alert> out) throws Exception {
        long n = e.number;
        Sequence s = sequences.get(ctx.getCurrentKey());
        if (s == null) s = sequence.value();
        String key = ctx.getCurrentKey();
        if (e.lostAfter) {
            // the report before any record of its sequence: the first record opens it, as if it
            // came first
            if (s == null) {
                s = new Sequence();
                s.next = NO_RECORD_YET;
                s.opening = true; // keeps the report until the sequence opens (forgetPassed)
                s.openUntil = UNTIL_A_RECORD;
            }
            if (s.lostAfter == null)
                s.lostAfter = new TimedEntries(); // state written before the field
            if ((n + 1 >= s.next || below(s, n))
                    && s.lostAfter.size() < MAX_DEAD_LETTERED
                    && indexOf(s.lostAfter, n) < 0) {
                s.lostAfter.add(e.eventTimeMillis, e.id, String.valueOf(n));
            }
            ctx.output(NOTICES, SequenceStarts.Notice.lost(key, n, e.id, e.eventTimeMillis, false));
            sequences.put(key, s);
            return;
        }
        if (e.deadLetter) {
            if (s == null || s.next == NO_RECORD_YET) {
                TimedEntries reported = s == null ? null : s.lostAfter;
                s = new Sequence();
                s.lostAfter = reported;
                // the first line seen of the sequence is the dead one: the next record shows the
                // gap
                s.next = n;
                if (n > 1) openUntilARecord(s, e);
            }
            if (s.deadLettered == null)
                s.deadLettered = new TimedEntries(); // state written before the field
            if ((n >= s.next || below(s, n))
                    && s.deadLettered.size() < MAX_DEAD_LETTERED
                    && indexOf(s.deadLettered, n) < 0) {
                s.deadLettered.add(e.eventTimeMillis, e.id, String.valueOf(n));
            }
            sequences.put(key, s);
            return;
        }
        TimedEntries reported = null;
        if (s != null
                && s.next
                        == NO_RECORD_YET) { // only the collector's report of lost lines came before
            reported = s.lostAfter;
            s = null;
        }
        if (s != null
                && s.opening
                && s.openUntil == UNTIL_A_RECORD) { // opened by a dead letter: the grace starts now
            s.openUntil = e.eventTimeMillis + settings.recordGapGraceMillis;
            ctx.timerService().registerEventTimeTimer(s.openUntil);
        }
        if (s == null) {
            s = new Sequence();
            s.lostAfter = reported;
            s.next = n + 1;
            if (n == 1 && e.start) out.collect(restarted(key, e.id, e.eventTimeMillis));
            if (n > 1) {
                open(s, e, ctx);
            } else {
                ctx.output(
                        NOTICES,
                        SequenceStarts.Notice.begins(key, n, e.start, e.id, e.eventTimeMillis));
            }
        } else if (n == s.next) {
            s.next++;
            absorb(s);
        } else if (n > s.next) {
            s.waiting.add(e.eventTimeMillis, e.id, String.valueOf(n));
            ctx.timerService()
                    .registerEventTimeTimer(e.eventTimeMillis + settings.recordGapGraceMillis);
        } else if (below(s, n)) { // the sequence's beginning, after later records
            s.head.add(n, e.id, e.eventTimeMillis);
            if (n == 1 && e.start) s.headStart = true;
        } // n < next: seen already (a copy) or given up on
        sequences.put(key, s);
    }

    @Override
    public void writeBack(java.util.function.Consumer<String> setKey) throws Exception {
        for (java.util.Map.Entry<String, Sequence> e : sequences.entrySet()) {
            setKey.accept(e.getKey());
            sequence.update(e.getValue());
        }
        sequences.clear();
    }

    /**
     * Moves {@code next} past the waiting records that now follow on, and forgets dead-lettered
     * numbers it passed.
     */
    private static void absorb(Sequence s) {
        int i;
        while ((i = indexOf(s.waiting, s.next)) >= 0) {
            remove(s.waiting, i);
            s.next++;
        }
        forgetPassed(s);
    }

    /**
     * Forgets the dead-lettered numbers and reports of lost lines below {@code next}, unless the
     * sequence still opens (they may be of its beginning).
     */
    private static void forgetPassed(Sequence s) {
        if (s.opening) return;
        if (s.deadLettered != null && s.deadLettered.size() > 0) dropBelow(s.deadLettered, s.next);
        if (s.lostAfter != null && s.lostAfter.size() > 0)
            dropBelow(s.lostAfter, s.next - 1); // a gap after next - 1 is still to come
    }

    /**
     * Whether number {@code n} is below the first record of a sequence that still opens: of its
     * beginning.
     */
    private static boolean below(Sequence s, long n) {
        return s.opening
                && n < s.head.highest(); // the first record to arrive is the highest of the head
    }

    /**
     * {@link Sequence#openUntil} of a sequence opened by a dead letter: open until its first record
     * arrives, whose event time starts the grace. A dead letter's time is when its line was
     * shipped, no event time: a log shipped late (a backlog, a catch-up, a file written at once)
     * ships its dead letters long after its records' times, and the records and the dead letters
     * reach this rule on two inputs that keep no order between them, so a dead letter may come
     * before the records around it.
     */
    static final long UNTIL_A_RECORD = Long.MAX_VALUE;

    /**
     * {@link Sequence#next} of a sequence of which only the collector's report of lost lines has
     * come ({@link Numbered#lostAfter}): the report names the last line shipped before the loss,
     * and the records up to it may still be on their way (the two inputs keep no order), so the
     * sequence's first record sets {@code next} as if it had come first, and the report stays with
     * it.
     */
    static final long NO_RECORD_YET = 0;

    /**
     * Opens a sequence whose first line to arrive is a dead letter above number 1 ({@link
     * #UNTIL_A_RECORD}).
     */
    private static void openUntilARecord(Sequence s, Numbered e) {
        s.opening = true;
        s.openUntil = UNTIL_A_RECORD;
        if (s.head == null) s.head = new Runs(); // state written before the field
        s.head.add(e.number, e.id, e.eventTimeMillis);
    }

    /**
     * Opens a sequence whose first record to arrive, {@code e}, is above number 1: lower ones may
     * follow within its grace.
     */
    private void open(Sequence s, Numbered e, Context ctx) {
        s.opening = true;
        s.openUntil = e.eventTimeMillis + settings.recordGapGraceMillis;
        if (s.head == null) s.head = new Runs(); // state written before the field
        s.head.add(e.number, e.id, e.eventTimeMillis);
        ctx.timerService().registerEventTimeTimer(s.openUntil);
    }

    /**
     * Ends the opening of a sequence: its start record's restart, the gaps between the numbers that
     * arrived of its beginning, and its lowest number told to {@link SequenceStarts}.
     */
    private static void close(String key, Sequence s, Collector<Alert> out, OnTimerContext ctx) {
        s.opening = false;
        Runs h = s.head;
        long low = h.lows.get(0);
        if (low == 1 && s.headStart) out.collect(restarted(key, h.ids.get(0), h.times.get(0)));
        for (int k = 1; k < h.size(); k++) {
            alertGap(
                    key,
                    s,
                    h.highs.get(k - 1) + 1,
                    h.lows.get(k),
                    h.times.get(k),
                    h.ids.get(k),
                    out,
                    ctx);
        }
        ctx.output(
                NOTICES,
                SequenceStarts.Notice.begins(
                        key, low, low == 1 && s.headStart, h.ids.get(0), h.times.get(0)));
        s.head = new Runs();
        s.headStart = false;
        forgetPassed(s);
    }

    /**
     * Alerts the gap of the numbers from {@code from} to {@code n - 1}, and tells {@link
     * SequenceStarts} when a report of lost lines explained it (that report explains nothing more).
     */
    private static void alertGap(
            String key,
            Sequence s,
            long from,
            long n,
            long at,
            String id,
            Collector<Alert> out,
            OnTimerContext ctx) {
        Alert a = gap(key, s, from, n, at, id);
        out.collect(a);
        if (GapClass.COLLECTOR_LOSS.id.equals(a.gapClass)) {
            ctx.output(NOTICES, SequenceStarts.Notice.lost(key, from - 1, a.id, at, true));
        }
    }

    /**
     * The alert of the numbers from {@code from} to {@code n - 1}, missing before record {@code n}
     * (event {@code id} at {@code at}).
     */
    private static Alert gap(String key, Sequence s, long from, long n, long at, String id) {
        String server = key.substring(0, key.indexOf('\u0000'));
        String run = key.substring(key.indexOf('\u0000') + 1);
        long missing = n - from;
        List<String> dead = new java.util.ArrayList<>();
        if (s.deadLettered != null) {
            for (int i = 0; i < s.deadLettered.size(); i++) {
                long d = Long.parseLong(s.deadLettered.subjects.get(i));
                if (d >= from && d < n) dead.add(s.deadLettered.ids.get(i));
            }
        }
        int lost = s.lostAfter == null ? -1 : indexOf(s.lostAfter, from - 1);
        GapClass c =
                lost >= 0
                        ? GapClass.COLLECTOR_LOSS
                        : dead.size() == missing ? GapClass.DEAD_LETTER : GapClass.UNEXPLAINED;
        String which =
                missing == 1
                        ? "record " + from + " is"
                        : missing + " records, " + from + " to " + (n - 1) + ", are";
        String deadToo =
                dead.isEmpty()
                        ? ""
                        : "; " + dead.size() + " of them are dead letters, " + deadLetters(dead);
        String why =
                switch (c) {
                    case COLLECTOR_LOSS ->
                            "The collector reports them lost: its dead letter "
                                    + s.lostAfter.ids.get(lost)
                                    + " holds record "
                                    + (from - 1)
                                    + ", the last line it shipped before them, and says why"
                                    + deadToo;
                    case DEAD_LETTER ->
                            (missing == 1
                                            ? "Its line is a dead letter, "
                                            : "Their lines are dead letters, ")
                                    + deadLetters(dead)
                                    + ": read the reason there";
                    default ->
                            "Deleted from the log, lost on the way, or dropped by the plugin (a PERFORMANCE strategy's full buffer)"
                                    + deadToo;
                };
        Alert a =
                Alert.of(
                                RULE,
                                c.severity,
                                RULE + "/" + server + "/" + run + "/" + from,
                                server,
                                run,
                                which
                                        + " missing from the audit trail of "
                                        + server
                                        + " (sequence started "
                                        + run
                                        + "); record "
                                        + n
                                        + " at "
                                        + Instant.ofEpochMilli(at)
                                        + " came after them. "
                                        + why)
                        .withEvidence(List.of(id), at, at);
        a.gapClass = c.id;
        return a;
    }

    /** Up to five dead letters' ids, and how many more. */
    private static String deadLetters(List<String> ids) {
        String shown = String.join(", ", ids.subList(0, Math.min(5, ids.size())));
        return ids.size() > 5 ? shown + " and " + (ids.size() - 5) + " more" : shown;
    }

    /**
     * The alert of a sequence that starts with the plugin's start record, number 1 (event {@code
     * id} at {@code at}): the numbering started again.
     */
    private static Alert restarted(String key, String id, long at) {
        String server = key.substring(0, key.indexOf('\u0000'));
        String run = key.substring(key.indexOf('\u0000') + 1);
        Alert a =
                Alert.of(
                                RULE,
                                GapClass.RESTART.severity,
                                RULE + "/" + server + "/" + run + "/0",
                                server,
                                run,
                                "The audit record numbering of "
                                        + server
                                        + " started again at "
                                        + Instant.ofEpochMilli(at)
                                        + " (sequence started "
                                        + run
                                        + "): the audit plugin's start record is number 1."
                                        + " The server or its audit plugin started; nothing is missing at the sequence's start")
                        .withEvidence(List.of(id), at, at);
        a.gapClass = GapClass.RESTART.id;
        return a;
    }

    /** Drops the dead-lettered numbers below {@code next}: the gap they belong to is alerted. */
    private static void dropBelow(TimedEntries d, long next) {
        for (int i = d.size() - 1; i >= 0; i--) {
            if (Long.parseLong(d.subjects.get(i)) < next) remove(d, i);
        }
    }

    private static int indexOf(TimedEntries w, long number) {
        String wanted = String.valueOf(number);
        for (int i = 0; i < w.size(); i++) {
            if (w.subjects.get(i).equals(wanted)) return i;
        }
        return -1;
    }

    private static void remove(TimedEntries w, int i) {
        w.times.remove(i);
        w.ids.remove(i);
        w.subjects.remove(i);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<Alert> out) throws Exception {
        Sequence s = sequences.get(ctx.getCurrentKey());
        if (s == null) s = sequence.value();
        if (s == null) return;
        boolean changed = false;
        if (s.opening && timestamp >= s.openUntil) {
            close(ctx.getCurrentKey(), s, out, ctx);
            changed = true;
        }
        while (s.waiting.size() > 0) {
            // the lowest waiting number; alert when it has waited its grace
            int lowest = 0;
            for (int i = 1; i < s.waiting.size(); i++) {
                if (Long.parseLong(s.waiting.subjects.get(i))
                        < Long.parseLong(s.waiting.subjects.get(lowest))) lowest = i;
            }
            long n = Long.parseLong(s.waiting.subjects.get(lowest));
            long at = s.waiting.times.get(lowest);
            if (at + settings.recordGapGraceMillis > timestamp) break;
            alertGap(ctx.getCurrentKey(), s, s.next, n, at, s.waiting.ids.get(lowest), out, ctx);
            s.next = n;
            absorb(s);
            changed = true;
        }
        if (changed) sequences.put(ctx.getCurrentKey(), s);
    }
}
