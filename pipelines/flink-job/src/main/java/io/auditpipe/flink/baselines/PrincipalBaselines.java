package io.auditpipe.flink.baselines;

import io.auditpipe.flink.alerts.Alert;
import io.auditpipe.flink.alerts.AlertRule;
import io.auditpipe.flink.functions.WriteBackOperator;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Learned baselines, one per principal (server and user; {@link BaselineEvent#key}), and the four
 * rules that compare an event with its principal's: a first access to a classified table or data
 * class, an access outside the hours it works in (learned; or outside the configured business
 * hours), an hour of records far above its own, and a new origin of an administrator. A principal's
 * baseline learns for {@link BaselineSettings#learningMillis} of event time from its first event
 * before any of them fires for it, and keeps learning afterwards (what alerted once becomes usual).
 *
 * <p>Reads the stored events (first copies: each record counted once). Alert ids are deterministic
 * (the event, or the principal and the hour), so a replay from a checkpoint raises the same alerts.
 * State is one {@link Profile} per principal and one event-time timer, both cleared once the
 * principal has had no event for {@link BaselineSettings#forgetAfterMillis}. The principals of one
 * checkpoint interval are kept in memory and written into the keyed state once, before the snapshot
 * ({@link WriteBackOperator}: run it there): a principal is busy (every record of an account is
 * its), and on RocksDB reading and writing its whole profile (up to 500 objects and 50 origins) per
 * record was a fifth of the job's time.
 *
 * <p>Seeds: imported history learns the same baselines without judging ({@link #learningOnly}) and
 * leaves them in the store; the live job starts a principal it has no state of from its stored
 * baseline ({@link ProfileSeeds}), so a new installation with imported months does not start blind.
 */
public class PrincipalBaselines extends KeyedProcessFunction<String, BaselineEvent, Alert>
        implements WriteBackOperator.WritesBack<String> {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(PrincipalBaselines.class);
    public static final String FIRST_ACCESS = AlertRule.FIRST_ACCESS.id;
    public static final String OFF_HOURS = AlertRule.OFF_HOURS.id;
    public static final String VOLUME_SPIKE = AlertRule.VOLUME_SPIKE.id;
    public static final String NEW_ORIGIN = AlertRule.NEW_ORIGIN.id;

    /** Imported history's baselines at the end of its input: the seeds of the live job's. */
    public static final OutputTag<Profile> PROFILES = new OutputTag<>("baseline-profiles") {};

    private final BaselineSettings settings;
    private final ProfileSeeds seeds;
    private final boolean learnOnly;
    private transient ValueState<Profile> profile;
    private transient ValueState<Long> timer;

    /** The principals touched since the last snapshot, and their timers (null: cleared). */
    private transient Map<String, Profile> profiles;

    private transient Map<String, Long> timers;
    private transient Counter seedsFound;
    private transient Counter seedLookupsFailed;

    /**
     * The live job's: judges each event; a principal it has no state of starts from its seed, if
     * {@code seeds} has one.
     */
    public PrincipalBaselines(BaselineSettings settings, ProfileSeeds seeds) {
        this(settings, seeds, false);
    }

    private PrincipalBaselines(BaselineSettings settings, ProfileSeeds seeds, boolean learnOnly) {
        this.settings = settings;
        this.seeds = seeds;
        this.learnOnly = learnOnly;
    }

    /**
     * Imported history's: learns without judging (history raises no alerts), from the seed a
     * previous import left, and emits each principal's baseline to {@link #PROFILES} at the end of
     * the input.
     */
    public static PrincipalBaselines learningOnly(BaselineSettings settings, ProfileSeeds seeds) {
        return new PrincipalBaselines(settings, seeds, true);
    }

    /**
     * The stored baseline of the event's principal, unless there is none or it was forgotten by the
     * event's time.
     */
    private Profile seeded(BaselineEvent e) {
        if (seeds == null) return null;
        Profile seed;
        try {
            seed = seeds.find(e.server, e.user);
        } catch (Exception ex) {
            // a principal learned from scratch is a blind week, not a stopped pipeline
            seedLookupsFailed.inc();
            LOG.warn(
                    "the stored baseline of {} on {} could not be read; it learns from scratch",
                    e.user,
                    e.server,
                    ex);
            return null;
        }
        if (seed == null || e.eventTimeMillis >= seed.lastMillis + settings.forgetAfterMillis)
            return null;
        seedsFound.inc();
        return seed;
    }

    public static String key(BaselineEvent e) {
        return e.key();
    }

    @Override
    public void open(OpenContext context) throws Exception {
        profile =
                getRuntimeContext().getState(new ValueStateDescriptor<>("baseline", Profile.class));
        timer =
                getRuntimeContext()
                        .getState(new ValueStateDescriptor<>("baseline-timer", Long.class));
        profiles = new HashMap<>();
        timers = new HashMap<>();
        seedsFound = getRuntimeContext().getMetricGroup().counter("baselineSeedsFound");
        seedLookupsFailed =
                getRuntimeContext().getMetricGroup().counter("baselineSeedLookupsFailed");
        if (seeds != null) seeds.open();
    }

    @Override
    public void close() throws Exception {
        if (seeds != null) seeds.close();
    }

    @Override
    public void processElement(BaselineEvent e, Context ctx, Collector<Alert> out)
            throws Exception {
        long t = e.eventTimeMillis;
        String key = ctx.getCurrentKey();
        Profile p = profileOf(key);
        if (p == null) p = seeded(e);
        if (p == null) p = Profile.startingAt(e.server, e.user, t);
        boolean judged = !learnOnly && !p.learning(t, settings);
        firstAccess(p, e, judged, out);
        offHours(p, e, judged, out);
        volume(p, e, judged, out);
        newOrigin(p, e, judged, out);
        p.sinceMillis = Math.min(p.sinceMillis, t);
        p.lastMillis = Math.max(p.lastMillis, t);
        profiles.put(key, p);
        if (timerOf(key) == null) {
            long at = p.lastMillis + settings.forgetAfterMillis;
            ctx.timerService().registerEventTimeTimer(at);
            timers.put(key, at);
        }
    }

    /**
     * The principal's profile: from memory since the last snapshot, else from state; null if none.
     */
    private Profile profileOf(String key) throws Exception {
        if (profiles.containsKey(key)) return profiles.get(key);
        Profile p = profile.value();
        profiles.put(key, p);
        return p;
    }

    private Long timerOf(String key) throws Exception {
        if (timers.containsKey(key)) return timers.get(key);
        Long at = timer.value();
        timers.put(key, at);
        return at;
    }

    private void forget(String key) {
        profiles.put(key, null);
        timers.put(key, null);
    }

    @Override
    public void writeBack(Consumer<String> setKey) throws Exception {
        WriteBackOperator.writeBack(profiles, profile, setKey);
        WriteBackOperator.writeBack(timers, timer, setKey);
    }

    private void firstAccess(Profile p, BaselineEvent e, boolean judged, Collector<Alert> out) {
        if (e.objects == null) return;
        List<String> first = new ArrayList<>();
        for (String o : e.objects) {
            if (p.objects.contains(o)) continue;
            if (p.objects.size() >= settings.maxObjects) break;
            p.objects.add(o);
            first.add(o);
        }
        if (!judged || first.isEmpty()) return;
        out.collect(
                alert(
                        FIRST_ACCESS,
                        Alert.MEDIUM,
                        FIRST_ACCESS + "/" + e.id,
                        e,
                        e.user
                                + " touched "
                                + String.join(", ", first)
                                + " on "
                                + e.server
                                + " for the first time since "
                                + Instant.ofEpochMilli(p.sinceMillis)
                                + " (learning "
                                + days(settings.learningMillis)
                                + ")"));
    }

    private void offHours(Profile p, BaselineEvent e, boolean judged, Collector<Alert> out) {
        long t = e.eventTimeMillis;
        int hour = (int) Math.floorMod(t / BaselineSettings.HOUR, 24L);
        long clockHour = Math.floorDiv(t, BaselineSettings.HOUR) * BaselineSettings.HOUR;
        boolean off =
                settings.offHoursByBusinessHours
                        ? !learnOnly && Boolean.TRUE.equals(e.afterHours)
                        : judged && !usualHour(p, hour);
        if (off && p.offHoursAlerted != clockHour) {
            p.offHoursAlerted = clockHour;
            String summary =
                    e.user
                            + " was active on "
                            + e.server
                            + " at "
                            + Instant.ofEpochMilli(t)
                            + (settings.offHoursByBusinessHours
                                    ? ", outside the business hours"
                                    : ", an hour of the day (UTC) it has worked in on "
                                            + p.activeDays[hour]
                                            + " day(s) (usual: "
                                            + settings.usualHourDays
                                            + ", or the hour before or after)");
            out.collect(hourly(OFF_HOURS, Alert.MEDIUM, e, clockHour, summary));
        }
        long day = Math.floorDiv(t, BaselineSettings.DAY) + 1;
        if (day > p.lastActiveDay[hour]) {
            p.lastActiveDay[hour] = day;
            p.activeDays[hour]++;
        }
    }

    private boolean usualHour(Profile p, int hour) {
        for (int h : new int[] {hour, (hour + 23) % 24, (hour + 1) % 24}) {
            if (p.activeDays[h] >= settings.usualHourDays) return true;
        }
        return false;
    }

    private void volume(Profile p, BaselineEvent e, boolean judged, Collector<Alert> out) {
        long clockHour =
                Math.floorDiv(e.eventTimeMillis, BaselineSettings.HOUR) * BaselineSettings.HOUR;
        if (clockHour < p.hourStart)
            return; // a late record of an hour already closed: not counted again
        if (clockHour > p.hourStart) {
            p.closeHour();
            p.hourStart = clockHour;
            p.hourRecords = 0;
            p.hourAlerted = false;
        }
        p.hourRecords++;
        if (!judged || p.hourAlerted || p.hours < settings.volumeMinHours) return;
        double threshold =
                Math.max(
                        settings.volumeMinRecords,
                        Math.max(
                                p.mean * settings.volumeFactor,
                                p.mean + settings.volumeSigmas * p.deviation()));
        if (p.hourRecords < threshold) return;
        p.hourAlerted = true;
        String summary =
                String.format(
                        Locale.ROOT,
                        "%s wrote %d records on %s in the hour from %s, against %.1f +- %.1f an active hour"
                                + " over %d hours (threshold %.0f)",
                        e.user,
                        p.hourRecords,
                        e.server,
                        Instant.ofEpochMilli(clockHour),
                        p.mean,
                        p.deviation(),
                        p.hours,
                        Math.ceil(threshold));
        out.collect(hourly(VOLUME_SPIKE, Alert.HIGH, e, clockHour, summary));
    }

    private void newOrigin(Profile p, BaselineEvent e, boolean judged, Collector<Alert> out) {
        if (!e.privileged() || e.origin == null) return;
        int known = p.origins.indexOf(e.origin);
        if (known >= 0) {
            p.origins.remove(known);
            p.originsSeen.remove(known);
        } else if (p.origins.size() >= settings.maxOrigins) {
            p.origins.remove(0);
            p.originsSeen.remove(0);
        }
        p.origins.add(e.origin);
        p.originsSeen.add(e.eventTimeMillis);
        if (!judged || known >= 0) return;
        out.collect(
                alert(
                        NEW_ORIGIN,
                        Alert.HIGH,
                        NEW_ORIGIN + "/" + e.server + "/" + e.user + "/" + e.origin,
                        e,
                        "administrator "
                                + e.user
                                + " connected to "
                                + e.server
                                + " from "
                                + e.origin
                                + ", an origin not seen for it since "
                                + Instant.ofEpochMilli(p.sinceMillis)));
    }

    private static Alert alert(
            String rule, String severity, String id, BaselineEvent e, String summary) {
        return Alert.of(rule, severity, id, e.server, e.user, summary)
                .withEvidence(List.of(e.id), e.eventTimeMillis, e.eventTimeMillis)
                .withControls(e.controls);
    }

    /** An alert of {@code rule} for the principal's clock hour {@code clockHour}: one an hour. */
    private static Alert hourly(
            String rule, String severity, BaselineEvent e, long clockHour, String summary) {
        return alert(
                rule, severity, rule + "/" + e.server + "/" + e.user + "/" + clockHour, e, summary);
    }

    private static String days(long millis) {
        return millis % BaselineSettings.DAY == 0
                ? millis / BaselineSettings.DAY + "d"
                : millis / 1000 + "s";
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<Alert> out) throws Exception {
        String key = ctx.getCurrentKey();
        Profile p = profileOf(key);
        if (learnOnly && p != null && ctx.timerService().currentWatermark() == Long.MAX_VALUE) {
            // the end of the imported input: every timer fires, each principal's baseline goes to
            // the store
            ctx.output(PROFILES, p);
            forget(key);
            return;
        }
        if (p == null || timestamp >= p.lastMillis + settings.forgetAfterMillis) {
            forget(key);
            return;
        }
        long at = p.lastMillis + settings.forgetAfterMillis;
        ctx.timerService().registerEventTimeTimer(at);
        timers.put(key, at);
    }
}
