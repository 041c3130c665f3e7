package io.auditpipe.flink.sessions;

import io.auditpipe.flink.functions.WriteBackOperator;
import io.auditpipe.flink.options.JobOptions;
import io.auditpipe.parser.AuditEvent;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Sessions from the stored events (first copies only: each record counted once; {@link
 * SessionEvent}, events without a connection id belong to none), keyed by server and connection id
 * ({@link #key}). A login starts a session; a failed login ends it at once; a logout ends it; so
 * does an idle time with no record of it (event time: the watermark passing the last record plus
 * {@code idleMillis}), and a second login on the same connection id (a restarted server numbers its
 * connections again). Records of a connection whose login is not here (written before the records
 * the pipeline has) start a session without one.
 *
 * <p>Each session is emitted whole when it starts, at most every {@code refreshMillis} of its event
 * time while it changes, and when it ends, always under the same id: the newest emission is the
 * session. A replay from a checkpoint emits the same sessions under the same ids.
 *
 * <p>State is one {@link OpenSession} per open connection, tables bounded by {@code maxTables},
 * cleared with its timer when the session ends. The connections of one checkpoint interval are kept
 * in memory and written into the keyed state once, before the snapshot ({@link WriteBackOperator}:
 * run it there): on RocksDB a read and a write of a session per record, each serialized, took a
 * fifth to a third of the job's time. One event-time timer per session, moved only when a change
 * needs an earlier one than the one pending (its next refresh), not at every record: the idle end
 * is checked when the timer fires, and set again from the last record's time.
 */
public class SessionBuilder extends KeyedProcessFunction<String, SessionEvent, Session>
        implements WriteBackOperator.WritesBack<String> {
    private static final long serialVersionUID = 1L;
    public static final String LOGOUT = "logout";

    private final long idleMillis;
    private final long refreshMillis;
    private final int maxTables;
    private transient ValueState<OpenSession> state;

    /**
     * The connections touched since the last snapshot: the open ones, and null for one that ended.
     */
    private transient Map<String, OpenSession> touched;

    // what the former layout kept (four values per connection), read once per connection after a
    // restore from its checkpoints, moved over and cleared
    private transient ValueState<Session> formerSession;
    private transient ValueState<Long> formerTimer;
    private transient ValueState<Long> formerEmittedRecords;
    private transient ValueState<Long> formerEmittedAt;

    public SessionBuilder(long idleMillis, long refreshMillis, int maxTables) {
        if (idleMillis <= 0)
            throw new IllegalArgumentException(
                    JobOptions.SESSIONS_IDLE_TIMEOUT.key() + ": must be positive");
        if (refreshMillis <= 0)
            throw new IllegalArgumentException(
                    JobOptions.SESSIONS_REFRESH.key() + ": must be positive");
        if (maxTables < 0)
            throw new IllegalArgumentException(
                    JobOptions.SESSIONS_MAX_TABLES.key() + ": must not be negative");
        this.idleMillis = idleMillis;
        this.refreshMillis = refreshMillis;
        this.maxTables = maxTables;
    }

    /** The key of an event's session (its server and connection id). */
    public static String key(SessionEvent e) {
        return e.key();
    }

    @Override
    public void open(OpenContext context) {
        state =
                getRuntimeContext()
                        .getState(new ValueStateDescriptor<>("open-session", OpenSession.class));
        touched = new HashMap<>();
        formerSession =
                getRuntimeContext().getState(new ValueStateDescriptor<>("session", Session.class));
        formerTimer =
                getRuntimeContext()
                        .getState(new ValueStateDescriptor<>("session-timer", Long.class));
        formerEmittedRecords =
                getRuntimeContext()
                        .getState(
                                new ValueStateDescriptor<>("session-emitted-records", Long.class));
        formerEmittedAt =
                getRuntimeContext()
                        .getState(new ValueStateDescriptor<>("session-emitted-at", Long.class));
    }

    @Override
    public void processElement(SessionEvent e, Context ctx, Collector<Session> out)
            throws Exception {
        long t = e.eventTimeMillis;
        boolean login = e.isLogin();
        String key = ctx.getCurrentKey();
        OpenSession o = openOf(key);
        if (o != null && login && (o.session.loginMillis != null || t > o.session.firstMillis)) {
            // the records before this login were another connection's
            o.session.end = Session.END_SUPERSEDED;
            end(key, o, ctx, out);
            o = null;
        }
        boolean started = o == null;
        if (started) o = new OpenSession(start(e));
        Session s = o.session;
        add(s, e);
        if (login && !AuditEvent.AUTH_SUCCESS.equals(e.authOutcome)) {
            s.end = Session.END_FAILED_LOGIN;
        } else if (e.logout) {
            s.end = Session.END_LOGOUT;
        }
        if (s.end != null) {
            end(key, o, ctx, out);
            return;
        }
        touched.put(key, o);
        if (started) emit(o, out);
        schedule(o, ctx);
    }

    /**
     * The connection's open session: from memory since the last snapshot, else from state (or moved
     * over); null if none.
     */
    private OpenSession openOf(String key) throws Exception {
        if (touched.containsKey(key)) return touched.get(key);
        OpenSession o = state.value();
        if (o == null) o = movedOver();
        touched.put(key, o);
        return o;
    }

    /**
     * A session of the former layout (its four values), moved over and cleared there; null if none.
     */
    private OpenSession movedOver() throws Exception {
        Session s = formerSession.value();
        if (s == null) return null;
        OpenSession o = new OpenSession(s);
        Long records = formerEmittedRecords.value();
        Long at = formerEmittedAt.value();
        Long timer = formerTimer.value();
        o.emittedRecords = records == null ? -1 : records;
        o.emittedAt = at == null ? s.lastMillis : at;
        o.timerAt =
                timer == null
                        ? OpenSession.NONE
                        : timer; // its timer is restored with the state and fires as before
        formerSession.clear();
        formerTimer.clear();
        formerEmittedRecords.clear();
        formerEmittedAt.clear();
        return o;
    }

    private Session start(SessionEvent e) {
        Session s = new Session();
        s.server = e.server;
        s.connectionId = e.connectionId;
        s.id = e.server + "/" + e.connectionId + "/" + e.eventTimeMillis;
        s.firstMillis = e.eventTimeMillis;
        s.lastMillis = e.eventTimeMillis;
        s.firstEventId = e.id;
        s.lastEventId = e.id;
        return s;
    }

    private void add(Session s, SessionEvent e) {
        long t = e.eventTimeMillis;
        s.records++;
        if (t < s.firstMillis) {
            s.firstMillis = t;
            s.firstEventId = e.id;
        }
        if (t >= s.lastMillis) {
            s.lastMillis = t;
            s.lastEventId = e.id;
        }
        if (e.isLogin()) {
            s.loginMillis = t;
            s.loginOutcome = e.authOutcome;
            s.loginEventId = e.id;
            // the login says who connected; later records may name the account differently
            // (proxies)
            s.user = e.user;
            s.host = e.host;
            s.ip = e.ip;
            s.osUser = e.osUser;
            if (e.db != null && !e.db.isEmpty()) s.db = e.db;
        } else {
            if (s.user == null) s.user = e.user;
            if (s.host == null) s.host = e.host;
            if (s.ip == null) s.ip = e.ip;
            if (s.osUser == null) s.osUser = e.osUser;
            if (s.db == null && e.db != null && !e.db.isEmpty()) s.db = e.db;
            if (e.failed) s.failures++;
        }
        if (e.logout) s.logoutMillis = t;
        if (e.category != null) s.categories.merge(e.category, 1L, Long::sum);
        s.addTables(e.tables, maxTables);
        s.addDataClasses(e.dataClasses);
    }

    private void emit(OpenSession o, Collector<Session> out) {
        out.collect(o.session.copy());
        o.emittedRecords = o.session.records;
        o.emittedAt = o.session.lastMillis;
    }

    /** Emits the ended session and forgets it, with its timer. */
    private void end(String key, OpenSession o, Context ctx, Collector<Session> out) {
        emit(o, out);
        if (o.timerAt != OpenSession.NONE) ctx.timerService().deleteEventTimeTimer(o.timerAt);
        touched.put(key, null);
    }

    /**
     * The session's timer at its next due time (its idle end, or its next refresh when it changed
     * since it was emitted), moved only when that is earlier than the one pending: a later due time
     * is found when the pending timer fires.
     */
    private void schedule(OpenSession o, Context ctx) {
        long due = o.session.lastMillis + idleMillis;
        if (o.changed()) due = Math.min(due, o.emittedAt + refreshMillis);
        if (o.timerAt != OpenSession.NONE && o.timerAt <= due) return;
        if (o.timerAt != OpenSession.NONE) ctx.timerService().deleteEventTimeTimer(o.timerAt);
        ctx.timerService().registerEventTimeTimer(due);
        o.timerAt = due;
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<Session> out)
            throws Exception {
        String key = ctx.getCurrentKey();
        OpenSession o = openOf(key);
        if (o == null) return;
        if (o.timerAt <= timestamp) o.timerAt = OpenSession.NONE; // the pending one: this
        Session s = o.session;
        if (timestamp >= s.lastMillis + idleMillis) {
            s.end = Session.END_IDLE;
            end(key, o, ctx, out);
            return;
        }
        if (o.changed() && timestamp >= o.emittedAt + refreshMillis) emit(o, out);
        schedule(o, ctx);
    }

    @Override
    public void writeBack(Consumer<String> setKey) throws Exception {
        WriteBackOperator.writeBack(touched, state, setKey);
    }
}
