package io.auditpipe.flink.baselines;

import java.util.ArrayList;

/**
 * What {@link PrincipalBaselines} has learned of one principal (server and user): the classified
 * tables and data classes it touched, the hours of the day it works in, its records per active
 * clock hour, and (for an administrator) where it connects from. A Flink POJO: the job's state, one
 * per principal.
 */
public class Profile {
    public String server;
    public String user;

    /** Event time of its first event: the learning period runs from here. */
    public long sinceMillis;

    /** Event time of its newest event. */
    public long lastMillis;

    /** Classified tables and data classes touched, at most {@link BaselineSettings#maxObjects}. */
    public ArrayList<String> objects = new ArrayList<>();

    /** Per hour of the day (UTC): the days it was active in that hour. */
    public int[] activeDays = new int[24];

    /**
     * Per hour of the day: the day (epoch day + 1; 0: never) last counted in {@link #activeDays}.
     */
    public long[] lastActiveDay = new long[24];

    /**
     * The clock hour being counted (epoch ms of its start; Long.MIN_VALUE: none yet), its records
     * and whether it alerted.
     */
    public long hourStart = Long.MIN_VALUE;

    public long hourRecords;
    public boolean hourAlerted;

    /**
     * Records per completed active hour: how many such hours, their mean and sum of squared
     * deviations (Welford).
     */
    public long hours;

    public double mean;
    public double m2;

    /**
     * Origins (ip, else host) of a privileged principal and when each was last seen, least recent
     * first.
     */
    public ArrayList<String> origins = new ArrayList<>();

    public ArrayList<Long> originsSeen = new ArrayList<>();

    /** The clock hour whose off-hours access alerted (Long.MIN_VALUE: none). */
    public long offHoursAlerted = Long.MIN_VALUE;

    public Profile() {}

    static Profile startingAt(String server, String user, long millis) {
        Profile p = new Profile();
        p.server = server;
        p.user = user;
        p.sinceMillis = millis;
        p.lastMillis = millis;
        return p;
    }

    boolean learning(long t, BaselineSettings s) {
        return t < sinceMillis + s.learningMillis;
    }

    /** Standard deviation of the records per active hour. */
    double deviation() {
        return hours < 2 ? 0 : Math.sqrt(m2 / (hours - 1));
    }

    /** Folds the counted hour into the records-per-hour baseline. */
    void closeHour() {
        if (hourStart == Long.MIN_VALUE || hourRecords == 0) return;
        hours++;
        double delta = hourRecords - mean;
        mean += delta / hours;
        m2 += delta * (hourRecords - mean);
    }
}
