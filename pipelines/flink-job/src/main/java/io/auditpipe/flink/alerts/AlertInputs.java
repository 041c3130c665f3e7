package io.auditpipe.flink.alerts;

import io.auditpipe.flink.records.DeadLetter;
import io.auditpipe.flink.records.ParsedRecord;
import io.auditpipe.parser.AuditEvent;
import org.apache.flink.api.common.functions.FilterFunction;
import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.util.Collector;

/**
 * What each alert rule reads and how it is keyed: the filters, projections and key selectors before
 * the rules.
 */
public final class AlertInputs {
    private AlertInputs() {}

    /** The event of each record; dead letters are left out (the store path reports them). */
    public static final class EventsOfRecords implements FlatMapFunction<ParsedRecord, AuditEvent> {
        @Override
        public void flatMap(ParsedRecord r, Collector<AuditEvent> out) {
            if (r.event != null) out.collect(r.event.event);
        }
    }

    /** Logins of a known user, failed or not: what the login rules read. */
    public static final class IsLogin implements FilterFunction<AuditEvent> {
        @Override
        public boolean filter(AuditEvent e) {
            return e.isLoginEvent() && e.user != null;
        }
    }

    /** Failed logins whose origin (ip, else host) is known: what the password-spray rule reads. */
    public static final class IsFailedLoginWithOrigin implements FilterFunction<AuditEvent> {
        @Override
        public boolean filter(AuditEvent e) {
            return e.isFailedLogin() && FailedLoginsPerOrigin.origin(e) != null;
        }
    }

    /** {@link FailedLoginsPerAccount}'s key: server and account. */
    public static final class ServerAndUser implements KeySelector<AuditEvent, String> {
        @Override
        public String getKey(AuditEvent e) {
            return e.server + "\u0000" + e.user;
        }
    }

    /** {@link FailedLoginsPerOrigin}'s key: server and origin. */
    public static final class ServerAndOrigin implements KeySelector<AuditEvent, String> {
        @Override
        public String getKey(AuditEvent e) {
            return e.server + "\u0000" + FailedLoginsPerOrigin.origin(e);
        }
    }

    /**
     * One event per data class a principal touched without being allowed to ({@link
     * UnauthorizedAccess}).
     */
    public static final class ViolationsPerClass
            implements FlatMapFunction<AuditEvent, AuditEvent> {
        @Override
        public void flatMap(AuditEvent e, Collector<AuditEvent> out) {
            if (e.user != null) UnauthorizedAccess.perClass(e, out);
        }
    }

    /** {@link UnauthorizedAccess}'s key: server, user and data class. */
    public static final class ServerUserAndClass implements KeySelector<AuditEvent, String> {
        @Override
        public String getKey(AuditEvent e) {
            return UnauthorizedAccess.key(e);
        }
    }

    /** Passes on what {@link #number} makes of an input, where it makes something. */
    abstract static class Numbering<T> implements FlatMapFunction<T, RecordGaps.Numbered> {
        abstract RecordGaps.Numbered number(T in);

        @Override
        public final void flatMap(T in, Collector<RecordGaps.Numbered> out) {
            RecordGaps.Numbered n = number(in);
            if (n != null) out.collect(n);
        }
    }

    /** Records in a server's own sequence, as the few fields the gap rule reads. */
    public static final class NumberedRecords extends Numbering<AuditEvent> {
        @Override
        RecordGaps.Numbered number(AuditEvent e) {
            return RecordGaps.numbered(e);
        }
    }

    /**
     * The Percona record numbers whose lines became dead letters, of a source's records ({@link
     * RecordGaps#deadLettered}).
     */
    public static final class DeadLetteredNumbersOfRecords extends Numbering<ParsedRecord> {
        @Override
        RecordGaps.Numbered number(ParsedRecord r) {
            return r.deadLetter == null ? null : RecordGaps.deadLettered(r.deadLetter);
        }
    }

    /**
     * The Percona record numbers whose lines became dead letters ({@link RecordGaps#deadLettered}).
     */
    public static final class DeadLetteredNumbers extends Numbering<DeadLetter> {
        @Override
        RecordGaps.Numbered number(DeadLetter d) {
            return RecordGaps.deadLettered(d);
        }
    }

    /** {@link RecordGaps}' key: the server's sequence. */
    public static final class RecordSequence implements KeySelector<RecordGaps.Numbered, String> {
        @Override
        public String getKey(RecordGaps.Numbered r) {
            return r.sequence;
        }
    }

    /** {@link SequenceStarts}' key: the server. */
    public static final class NoticeServer implements KeySelector<SequenceStarts.Notice, String> {
        @Override
        public String getKey(SequenceStarts.Notice n) {
            return n.server;
        }
    }

    /** {@link AlertsOnce}' key: the alert id. */
    public static final class AlertId implements KeySelector<Alert, String> {
        @Override
        public String getKey(Alert a) {
            return a.id;
        }
    }
}
