package io.auditpipe.flink.sessions;

import io.auditpipe.flink.options.JobOptions;
import io.auditpipe.parser.AuditEvent;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Sessions from the stored events (first copies only: each record counted once; {@link SessionEvent},
 * events without a connection id belong to none), keyed by server and connection id ({@link #key}). A login starts a session; a failed login ends it at once; a logout
 * ends it; so does an idle time with no record of it (event time: the watermark passing the last
 * record plus {@code idleMillis}), and a second login on the same connection id (a restarted server
 * numbers its connections again). Records of a connection whose login is not here (written before
 * the records the pipeline has) start a session without one.
 *
 * <p>Each session is emitted whole when it starts, at most every {@code refreshMillis} of its event
 * time while it changes, and when it ends, always under the same id: the newest emission is the
 * session. A replay from a checkpoint emits the same sessions under the same ids. State is one
 * session per open connection, tables bounded by {@code maxTables}, cleared with its timer when the
 * session ends.
 */
public class SessionBuilder extends KeyedProcessFunction<String, SessionEvent, Session> {
    private static final long serialVersionUID = 1L;
    public static final String LOGOUT = "logout";

    private final long idleMillis;
    private final long refreshMillis;
    private final int maxTables;
    private transient ValueState<Session> session;
    private transient ValueState<Long> timer;
    private transient ValueState<Long> emittedRecords;
    private transient ValueState<Long> emittedAt;

    public SessionBuilder(long idleMillis, long refreshMillis, int maxTables) {
        if (idleMillis <= 0) throw new IllegalArgumentException(JobOptions.SESSIONS_IDLE_TIMEOUT.key() + ": must be positive");
        if (refreshMillis <= 0) throw new IllegalArgumentException(JobOptions.SESSIONS_REFRESH.key() + ": must be positive");
        if (maxTables < 0) throw new IllegalArgumentException(JobOptions.SESSIONS_MAX_TABLES.key() + ": must not be negative");
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
        session = getRuntimeContext().getState(new ValueStateDescriptor<>("session", Session.class));
        timer = getRuntimeContext().getState(new ValueStateDescriptor<>("session-timer", Long.class));
        emittedRecords = getRuntimeContext().getState(new ValueStateDescriptor<>("session-emitted-records", Long.class));
        emittedAt = getRuntimeContext().getState(new ValueStateDescriptor<>("session-emitted-at", Long.class));
    }

    @Override
    public void processElement(SessionEvent e, Context ctx, Collector<Session> out) throws Exception {
        long t = e.eventTimeMillis;
        boolean login = e.isLogin();
        Session s = session.value();
        if (s != null && login && (s.loginMillis != null || t > s.firstMillis)) {
            s.end = Session.END_SUPERSEDED; // the records before this login were another connection's
            emit(s, out);
            clear(ctx);
            s = null;
        }
        boolean started = s == null;
        if (started) s = start(e);
        add(s, e);
        if (login && !AuditEvent.AUTH_SUCCESS.equals(e.authOutcome)) {
            s.end = Session.END_FAILED_LOGIN;
        } else if (e.logout) {
            s.end = Session.END_LOGOUT;
        }
        if (s.end != null) {
            emit(s, out);
            clear(ctx);
            return;
        }
        session.update(s);
        if (started) emit(s, out);
        schedule(s, ctx);
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
            // the login says who connected; later records may name the account differently (proxies)
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

    private void emit(Session s, Collector<Session> out) throws Exception {
        out.collect(s.copy());
        emittedRecords.update(s.records);
        emittedAt.update(s.lastMillis);
    }

    /** One timer per open session: its idle end, or its next refresh when it changed since it was emitted. */
    private void schedule(Session s, Context ctx) throws Exception {
        long next = s.lastMillis + idleMillis;
        Long emitted = emittedRecords.value();
        if (emitted == null || emitted != s.records) {
            Long at = emittedAt.value();
            next = Math.min(next, (at == null ? s.lastMillis : at) + refreshMillis);
        }
        Long current = timer.value();
        if (current != null && current == next) return;
        if (current != null) ctx.timerService().deleteEventTimeTimer(current);
        ctx.timerService().registerEventTimeTimer(next);
        timer.update(next);
    }

    private void clear(Context ctx) throws Exception {
        Long current = timer.value();
        if (current != null) ctx.timerService().deleteEventTimeTimer(current);
        session.clear();
        timer.clear();
        emittedRecords.clear();
        emittedAt.clear();
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<Session> out) throws Exception {
        Session s = session.value();
        timer.clear();
        if (s == null) return;
        if (timestamp >= s.lastMillis + idleMillis) {
            s.end = Session.END_IDLE;
            emit(s, out);
            clear(ctx);
            return;
        }
        Long emitted = emittedRecords.value();
        if (emitted == null || emitted != s.records) emit(s, out);
        schedule(s, ctx);
    }
}
