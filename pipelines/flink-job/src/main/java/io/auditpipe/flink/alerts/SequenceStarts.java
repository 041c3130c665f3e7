package io.auditpipe.flink.alerts;

import java.io.Serializable;
import java.time.Instant;
import java.util.List;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * {@code record_gap} across a server's sequences: a new sequence (a newer startup time than the
 * server's earlier ones) whose lowest number is above 1 is missing its beginning, records 1 to that
 * number less one: a restart whose first records were deleted from the log or never shipped. Keyed
 * by server; fed by {@link RecordGaps} ({@link RecordGaps#NOTICES}), which tells each sequence's
 * lowest number once its beginning had its grace to arrive. The first sequence the job sees of a
 * server raises nothing: it may have begun before the job knew the server (a new installation reads
 * a log from its middle).
 *
 * <p>The collector's reports of lost lines come here too: a loss after the last line of the
 * server's newest sequence that no gap of that sequence took is where the next sequence's beginning
 * went (the server restarted while the collector was down), so that gap is {@link
 * GapClass#COLLECTOR_LOSS}; any other is {@link GapClass#UNEXPLAINED}. State per server: its newest
 * startup time and the last such report: one small value per server, kept for the server's life (no
 * timer).
 */
public class SequenceStarts extends KeyedProcessFunction<String, SequenceStarts.Notice, Alert> {
    private static final long serialVersionUID = 1L;

    private transient ValueState<Server> server;

    /**
     * What {@link RecordGaps} tells of a sequence: its lowest number, or a report of lost lines, or
     * that a gap took one.
     */
    public static class Notice implements Serializable {
        private static final long serialVersionUID = 1L;
        public String server;

        /** The sequence's startup time, as its record ids write it. */
        public String startup;

        public long number;

        /** For a sequence's lowest number: whether it is the audit plugin's start record. */
        public boolean start;

        /** A report of lines lost after {@link #number} (the last line shipped before them). */
        public boolean lost;

        /**
         * With {@link #lost}: the report explained a gap of its own sequence, so no later
         * sequence's beginning.
         */
        public boolean taken;

        /** The event id of the lowest record; for a report, the dead letter's id. */
        public String id;

        public long eventTimeMillis;

        public Notice() {}

        static Notice begins(String sequenceKey, long number, boolean start, String id, long at) {
            Notice n = of(sequenceKey, number, id, at);
            n.start = start;
            return n;
        }

        static Notice lost(String sequenceKey, long after, String id, long at, boolean taken) {
            Notice n = of(sequenceKey, after, id, at);
            n.lost = true;
            n.taken = taken;
            return n;
        }

        private static Notice of(String sequenceKey, long number, String id, long at) {
            Notice n = new Notice();
            int sep = sequenceKey.indexOf('\u0000');
            n.server = sequenceKey.substring(0, sep);
            n.startup = sequenceKey.substring(sep + 1);
            n.number = number;
            n.id = id;
            n.eventTimeMillis = at;
            return n;
        }
    }

    /** A server's newest sequence and the last report of lost lines no gap took. */
    public static class Server implements Serializable {
        private static final long serialVersionUID = 1L;
        public String newest;

        /**
         * The sequence and number after which the collector reported lines lost; null: none
         * pending.
         */
        public String lostIn;

        public long lostAfter;

        /** The report's dead letter. */
        public String lostId;

        public Server() {}
    }

    @Override
    public void open(OpenContext context) {
        server =
                getRuntimeContext()
                        .getState(new ValueStateDescriptor<>("server-sequences", Server.class));
    }

    @Override
    public void processElement(Notice n, Context ctx, Collector<Alert> out) throws Exception {
        Server s = server.value();
        if (s == null) s = new Server();
        if (n.lost) {
            if (n.taken) {
                if (n.startup.equals(s.lostIn) && n.number == s.lostAfter) s.lostIn = null;
            } else if (s.newest == null || n.startup.compareTo(s.newest) >= 0) {
                s.lostIn = n.startup;
                s.lostAfter = n.number;
                s.lostId = n.id;
            }
            server.update(s);
            return;
        }
        boolean newer = s.newest == null || n.startup.compareTo(s.newest) > 0;
        if (s.newest != null && newer && n.number > 1) out.collect(missingBeginning(n, s));
        if (newer) {
            // a report of the sequence before explained this one's beginning, or nothing after it
            if (!n.startup.equals(s.lostIn)) s.lostIn = null;
            s.newest = n.startup;
        }
        server.update(s);
    }

    /** The alert of records 1 to {@code n.number - 1} of a sequence newer than {@code s.newest}. */
    private static Alert missingBeginning(Notice n, Server s) {
        boolean lost = s.newest.equals(s.lostIn);
        GapClass c = lost ? GapClass.COLLECTOR_LOSS : GapClass.UNEXPLAINED;
        String which =
                n.number == 2
                        ? "record 1 is"
                        : (n.number - 1) + " records, 1 to " + (n.number - 1) + ", are";
        String why =
                lost
                        ? "The collector reports lines lost after record "
                                + s.lostAfter
                                + " of the sequence started "
                                + s.newest
                                + " (its dead letter "
                                + s.lostId
                                + "): the server started again while it was down"
                        : "The sequence's beginning, the audit plugin's start record among it, was deleted from the log or lost"
                                + " on the way";
        Alert a =
                Alert.of(
                                RecordGaps.RULE,
                                c.severity,
                                RecordGaps.RULE + "/" + n.server + "/" + n.startup + "/1",
                                n.server,
                                n.startup,
                                which
                                        + " missing from the audit trail of "
                                        + n.server
                                        + " (sequence started "
                                        + n.startup
                                        + "): the numbering started again after the sequence started "
                                        + s.newest
                                        + ", and its lowest record to arrive is "
                                        + n.number
                                        + ", at "
                                        + Instant.ofEpochMilli(n.eventTimeMillis)
                                        + ". "
                                        + why)
                        .withEvidence(List.of(n.id), n.eventTimeMillis, n.eventTimeMillis);
        a.gapClass = c.id;
        return a;
    }
}
