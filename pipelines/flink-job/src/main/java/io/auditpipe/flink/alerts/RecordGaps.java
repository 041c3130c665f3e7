package io.auditpipe.flink.alerts;

import io.auditpipe.flink.functions.WriteBackOperator;

import io.auditpipe.parser.AuditEvent;
import io.auditpipe.parser.RecordNumbers;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

import java.time.Instant;
import java.util.List;

/**
 * {@code record_gap}: a record missing from a server's own record sequence (PCI DSS 10.2.1.6 and
 * tamper evidence): Percona's numbered records ({@link RecordNumbers}). Keyed by server and startup
 * time (one sequence per start).
 *
 * <p>The sequence starts at the first record seen. A record that arrives above the next expected
 * number waits: the missing ones may still come, out of order. When the watermark has passed the
 * waiting record's event time by {@code recordGapGrace} and the numbers below it are still missing,
 * the gap is alerted (once: the id is the server, sequence and first missing number) and the
 * sequence goes on from the waiting record. A record missing because its line could not be parsed
 * is a gap too: its dead letter says why.
 */
public class RecordGaps extends KeyedProcessFunction<String, RecordGaps.Numbered, Alert>
        implements WriteBackOperator.WritesBack<String> {
    private static final long serialVersionUID = 1L;
    public static final String RULE = AlertRule.RECORD_GAP.id;

    private final AlertSettings settings;
    /** Each sequence as of the last checkpoint ({@link #sequences} holds it since). */
    private transient ValueState<Sequence> sequence;
    /** The sequences seen since the last checkpoint, written into {@link #sequence} before the next one
     *  ({@link WriteBackOperator}: every numbered record changes its sequence). */
    private transient java.util.Map<String, Sequence> sequences;

    public RecordGaps(AlertSettings settings) {
        this.settings = settings;
    }

    /** The state of one sequence: the next number expected, and the records above it that wait. */
    public static class Sequence implements java.io.Serializable {
        private static final long serialVersionUID = 1L;
        public long next;
        public TimedEntries waiting = new TimedEntries(); // time = event time, id = event id, subject = number

        public Sequence() {}
    }

    /**
     * What the rule needs of a numbered record: this, not the whole event, crosses the shuffle to the
     * rule (a POJO Flink serializes field by field).
     */
    public static class Numbered implements java.io.Serializable {
        private static final long serialVersionUID = 1L;
        /** The sequence: server, NUL, the plugin's startup time ({@link #sequenceKey}). */
        public String sequence;
        public long number;
        public String id;
        public long eventTimeMillis;

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
        return r;
    }

    /** The key of a Percona record's sequence (server and startup time), or null for records without one. */
    public static String sequenceKey(AuditEvent e) {
        String startup = RecordNumbers.startup(e);
        return startup == null ? null : e.server + "\u0000" + startup;
    }

    @Override
    public void open(OpenContext context) {
        sequence = getRuntimeContext().getState(new ValueStateDescriptor<>("record-sequence", Sequence.class));
        sequences = new java.util.HashMap<>();
    }

    @Override
    public void processElement(Numbered e, Context ctx, Collector<Alert> out) throws Exception {
        long n = e.number;
        Sequence s = sequences.get(ctx.getCurrentKey());
        if (s == null) s = sequence.value();
        if (s == null) {
            s = new Sequence();
            s.next = n + 1;
        } else if (n == s.next) {
            s.next++;
            absorb(s);
        } else if (n > s.next) {
            s.waiting.add(e.eventTimeMillis, e.id, String.valueOf(n));
            ctx.timerService().registerEventTimeTimer(e.eventTimeMillis + settings.recordGapGraceMillis);
        } // n < next: seen already (a copy) or given up on
        sequences.put(ctx.getCurrentKey(), s);
    }

    @Override
    public void writeBack(java.util.function.Consumer<String> setKey) throws Exception {
        for (java.util.Map.Entry<String, Sequence> e : sequences.entrySet()) {
            setKey.accept(e.getKey());
            sequence.update(e.getValue());
        }
        sequences.clear();
    }

    /** Moves {@code next} past the waiting records that now follow on. */
    private static void absorb(Sequence s) {
        while (true) {
            int i = indexOf(s.waiting, s.next);
            if (i < 0) return;
            remove(s.waiting, i);
            s.next++;
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
        while (s.waiting.size() > 0) {
            // the lowest waiting number; alert when it has waited its grace
            int lowest = 0;
            for (int i = 1; i < s.waiting.size(); i++) {
                if (Long.parseLong(s.waiting.subjects.get(i)) < Long.parseLong(s.waiting.subjects.get(lowest))) lowest = i;
            }
            long n = Long.parseLong(s.waiting.subjects.get(lowest));
            long at = s.waiting.times.get(lowest);
            if (at + settings.recordGapGraceMillis > timestamp) break;
            String server = ctx.getCurrentKey().substring(0, ctx.getCurrentKey().indexOf('\u0000'));
            String run = ctx.getCurrentKey().substring(ctx.getCurrentKey().indexOf('\u0000') + 1);
            long missing = n - s.next;
            out.collect(Alert.of(RULE, Alert.HIGH, RULE + "/" + server + "/" + run + "/" + s.next, server, run,
                            (missing == 1 ? "record " + s.next + " is" : missing + " records, " + s.next + " to " + (n - 1) + ", are")
                                    + " missing from the audit trail of " + server + " (sequence started " + run
                                    + "); record " + n + " at " + Instant.ofEpochMilli(at) + " came after them."
                                    + " Deleted, lost on the way, or a dead letter (its reason says why)")
                    .withEvidence(List.of(s.waiting.ids.get(lowest)), at, at));
            s.next = n;
            absorb(s);
            changed = true;
        }
        if (changed) sequences.put(ctx.getCurrentKey(), s);
    }
}
