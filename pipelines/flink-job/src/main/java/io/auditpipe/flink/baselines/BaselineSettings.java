package io.auditpipe.flink.baselines;

import io.auditpipe.enrich.ComplianceSettings;
import io.auditpipe.flink.options.JobOptions;
import java.io.Serializable;
import org.apache.flink.configuration.Configuration;

/**
 * The learned-baseline rules' thresholds and learning period, as data (job options {@code
 * alerts.baselines.*}). Each value is checked here, and a bad one is named by its field.
 */
public final class BaselineSettings implements Serializable {
    private static final long serialVersionUID = 1L;
    static final long HOUR = 3_600_000L;
    static final long DAY = 24 * HOUR;

    /**
     * How long of event time, from a principal's first event, its baseline learns before any rule
     * fires.
     */
    public final long learningMillis;

    /**
     * A principal with no event for this long of event time is forgotten: its state and timer
     * cleared.
     */
    public final long forgetAfterMillis;

    /**
     * An hour of the day is one a principal works in once it was active in it on this many days.
     */
    public final int usualHourDays;

    /** Volume: the active hours a baseline needs before an hour's volume is judged. */
    public final int volumeMinHours;

    /** Volume: an hour far above the baseline holds at least this many times its mean... */
    public final double volumeFactor;

    /** ...and at least this many standard deviations above it... */
    public final double volumeSigmas;

    /** ...and at least this many records. */
    public final long volumeMinRecords;

    /** Origins remembered per privileged principal (the least recently seen goes first). */
    public final int maxOrigins;

    /** Classified tables and data classes remembered per principal. */
    public final int maxObjects;

    /**
     * off_hours compares with the configured business hours, not the learned hours (and needs no
     * learning).
     */
    public final boolean offHoursByBusinessHours;

    public BaselineSettings(
            long learningMillis,
            long forgetAfterMillis,
            int usualHourDays,
            int volumeMinHours,
            double volumeFactor,
            double volumeSigmas,
            long volumeMinRecords,
            int maxOrigins,
            int maxObjects,
            boolean offHoursByBusinessHours) {
        require(learningMillis >= 0, "learning", "not negative");
        require(
                forgetAfterMillis > learningMillis,
                "forget-after",
                "longer than the learning period");
        require(usualHourDays >= 1, "usual-hour-days", "at least 1");
        require(volumeMinHours >= 1, "volume.min-hours", "at least 1");
        require(volumeFactor >= 1, "volume.factor", "at least 1");
        require(volumeSigmas >= 0, "volume.sigmas", "not negative");
        require(volumeMinRecords >= 1, "volume.min-records", "at least 1");
        require(maxOrigins >= 1, "max-origins", "at least 1");
        require(maxObjects >= 1, "max-objects", "at least 1");
        this.learningMillis = learningMillis;
        this.forgetAfterMillis = forgetAfterMillis;
        this.usualHourDays = usualHourDays;
        this.volumeMinHours = volumeMinHours;
        this.volumeFactor = volumeFactor;
        this.volumeSigmas = volumeSigmas;
        this.volumeMinRecords = volumeMinRecords;
        this.maxOrigins = maxOrigins;
        this.maxObjects = maxObjects;
        this.offHoursByBusinessHours = offHoursByBusinessHours;
    }

    /** From the job's options {@code alerts.baselines.*}; a bad value is named by its key. */
    public static BaselineSettings fromOptions(Configuration o, ComplianceSettings compliance) {
        String reference = o.get(JobOptions.BASELINES_OFF_HOURS_REFERENCE);
        boolean business = "business-hours".equals(reference);
        if (!business && !"learned".equals(reference)) {
            throw new IllegalArgumentException(
                    JobOptions.BASELINES_OFF_HOURS_REFERENCE.key()
                            + ": '"
                            + reference
                            + "' is neither learned nor business-hours");
        }
        if (business && compliance.businessHours().isEmpty()) {
            throw new IllegalArgumentException(
                    JobOptions.BASELINES_OFF_HOURS_REFERENCE.key()
                            + ": business-hours, but no compliance.business-hours are configured");
        }
        return new BaselineSettings(
                o.get(JobOptions.BASELINES_LEARNING).toMillis(),
                o.get(JobOptions.BASELINES_FORGET_AFTER).toMillis(),
                o.get(JobOptions.BASELINES_USUAL_HOUR_DAYS),
                o.get(JobOptions.BASELINES_VOLUME_MIN_HOURS),
                o.get(JobOptions.BASELINES_VOLUME_FACTOR),
                o.get(JobOptions.BASELINES_VOLUME_SIGMAS),
                o.get(JobOptions.BASELINES_VOLUME_MIN_RECORDS),
                o.get(JobOptions.BASELINES_MAX_ORIGINS),
                o.get(JobOptions.BASELINES_MAX_OBJECTS),
                business);
    }

    /**
     * Seven days of learning, forgotten after 35 days without an event; the other defaults of
     * docs/alerts.md.
     */
    public static BaselineSettings defaults() {
        return new BaselineSettings(7 * DAY, 35 * DAY, 2, 24, 3.0, 3.0, 100, 50, 500, false);
    }

    private static void require(boolean ok, String field, String what) {
        if (!ok)
            throw new IllegalArgumentException("alerts.baselines." + field + ": must be " + what);
    }
}
