package io.auditpipe.bench;

import io.auditpipe.flink.baselines.Profile;
import io.auditpipe.flink.sessions.Session;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * The keyed state of the learned baselines ({@code PrincipalBaselines}: per principal a {@link
 * Profile} and its forget timer) and of the sessions ({@code SessionBuilder}: per open connection a
 * {@link Session}, its timer and two counters), in the bytes the job's own serializers write them:
 * what a checkpoint holds per principal and per open connection, key and timer included, and what
 * that comes to for a fleet. Each state is serialized with the serializer Flink makes of its type
 * (a POJO's), as the state backends do. Prints {@code name=value} lines; used by
 * bench/pipeline_bench.py; not a test.
 *
 * <p>Shapes: a service account (every hour of the day worked, 5 classified objects, no origins); an
 * administrator (10 hours, 10 objects, 20 origins); the bound (500 objects and 50 origins, the
 * defaults of {@code alerts.baselines.max-objects} and {@code max-origins}); a session of 8 tables,
 * 2 data classes and 5 statement categories, and one at the 50 tables of {@code
 * sessions.max-tables}.
 *
 * <p>Arguments: servers, principals per server, open connections per server (default 50 10000 500).
 */
public final class StateSizeBenchmark {
    private static final String SERVER = "db-prod-017.eu-west.example.net";
    private static final long T = 1_795_000_000_000L;

    private StateSizeBenchmark() {}

    public static void main(String[] args) throws IOException {
        int servers = args.length > 0 ? Integer.parseInt(args[0]) : 50;
        int principals = args.length > 1 ? Integer.parseInt(args[1]) : 10_000;
        int connections = args.length > 2 ? Integer.parseInt(args[2]) : 500;
        TypeSerializer<Profile> profiles =
                TypeInformation.of(Profile.class).createSerializer(new SerializerConfigImpl());
        TypeSerializer<Session> sessions =
                TypeInformation.of(Session.class).createSerializer(new SerializerConfigImpl());

        // per principal: the key (server NUL user), the profile and the forget timer (key,
        // timestamp)
        long service = principalBytes(profiles, profile("svc_payments", 24, 5, 0));
        long admin = principalBytes(profiles, profile("dba_alice", 10, 10, 20));
        long bound = principalBytes(profiles, profile("svc_payments", 24, 500, 50));
        // per open connection: the key (server/connection id), the session, its timer, the timer's
        // state and the two counters of what was written
        long session = connectionBytes(sessions, session(8));
        long sessionBound = connectionBytes(sessions, session(50));

        System.out.printf(
                "state_principal_service_bytes=%d%nstate_principal_admin_bytes=%d%n"
                        + "state_principal_bound_bytes=%d%nstate_session_bytes=%d%nstate_session_bound_bytes=%d%n",
                service, admin, bound, session, sessionBound);
        long fleetPrincipals = (long) servers * principals;
        long fleetConnections = (long) servers * connections;
        System.out.printf(
                "state_fleet=%d servers x %d principals, %d open connections each%n",
                servers, principals, connections);
        System.out.printf(
                "state_fleet_baselines_bytes=%d%nstate_fleet_baselines_bound_bytes=%d%n"
                        + "state_fleet_sessions_bytes=%d%nstate_fleet_sessions_bound_bytes=%d%n",
                fleetPrincipals * (service + admin) / 2,
                fleetPrincipals * bound,
                fleetConnections * session,
                fleetConnections * sessionBound);
    }

    static Profile profile(String user, int hoursOfDay, int objects, int origins) {
        Profile p = new Profile();
        p.server = SERVER;
        p.user = user;
        p.sinceMillis = T - 40L * 86_400_000L;
        p.lastMillis = T;
        for (int i = 0; i < objects; i++)
            p.objects.add(i % 2 == 0 ? "shop.table_" + i : "data_class_" + i);
        for (int h = 0; h < hoursOfDay; h++) {
            p.activeDays[h] = 30;
            p.lastActiveDay[h] = T / 86_400_000L + 1;
        }
        p.hourStart = T - T % 3_600_000L;
        p.hourRecords = 1_234;
        p.hours = 700;
        p.mean = 1_100.5;
        p.m2 = 9.9e7;
        for (int i = 0; i < origins; i++) {
            p.origins.add("10.20." + (i / 250) + "." + (i % 250));
            p.originsSeen.add(T - i * 60_000L);
        }
        return p;
    }

    static Session session(int tables) {
        Session s = new Session();
        s.server = SERVER;
        s.connectionId = 123_456_789L;
        s.id = SERVER + "/" + s.connectionId + "/" + T;
        s.user = "svc_payments";
        s.host = "app-17.eu-west.example.net";
        s.ip = "10.20.3.17";
        s.osUser = "";
        s.db = "shop";
        s.loginMillis = T;
        s.loginOutcome = "success";
        s.loginEventId = SERVER + "/123456789_2026-11-28T22:00:00";
        s.firstMillis = T;
        s.lastMillis = T + 60_000;
        s.records = 1_234;
        s.failures = 2;
        for (String c : Arrays.asList("select", "insert", "update", "begin", "commit"))
            s.categories.put(c, 200L);
        s.tables = new ArrayList<>();
        for (int i = 0; i < tables; i++) s.tables.add("shop.table_" + i);
        s.dataClasses = new ArrayList<>(Arrays.asList("pci_cardholder", "hipaa_ephi"));
        s.firstEventId = s.loginEventId;
        s.lastEventId = SERVER + "/123457999_2026-11-28T22:00:00";
        return s;
    }

    static long principalBytes(TypeSerializer<Profile> serializer, Profile p) throws IOException {
        long key = bytes(StringSerializer.INSTANCE, p.server + "\u0000" + p.user);
        return key + bytes(serializer, p) + key + bytes(LongSerializer.INSTANCE, p.lastMillis) * 2;
    }

    static long connectionBytes(TypeSerializer<Session> serializer, Session s) throws IOException {
        long key = bytes(StringSerializer.INSTANCE, s.server + "/" + s.connectionId);
        long aLong = bytes(LongSerializer.INSTANCE, 0L);
        // four states under the key (session, timer, emitted records, emitted at) and the timer
        // itself
        return 4 * key + bytes(serializer, s) + 3 * aLong + key + aLong;
    }

    static <T> long bytes(TypeSerializer<T> serializer, T value) throws IOException {
        DataOutputSerializer out = new DataOutputSerializer(1024);
        serializer.serialize(value, out);
        return out.length();
    }
}
