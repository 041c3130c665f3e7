package io.auditpipe.flink.alerts;

import io.auditpipe.enrich.ComplianceSettings;
import io.auditpipe.flink.options.JobOptions;
import java.io.Serializable;
import org.apache.flink.configuration.Configuration;

/**
 * The alert rules' thresholds and windows (job options {@code alerts.*}), and the change windows.
 */
public final class AlertSettings implements Serializable {
    private static final long serialVersionUID = 1L;

    public int bruteForceFailures = 5;
    public long bruteForceWindowMillis = 60_000;
    public int sprayAccounts = 5;
    public long sprayWindowMillis = 300_000;
    public int loginAfterFailures = 3;
    public long loginAfterFailuresWindowMillis = 300_000;
    public long unauthorizedAccessWindowMillis = 600_000;
    public long allowedLatenessMillis = 120_000;
    public long recordGapGraceMillis = 30_000;
    public ComplianceSettings compliance = ComplianceSettings.defaults();

    public static AlertSettings fromOptions(Configuration o) {
        AlertSettings s = new AlertSettings();
        s.bruteForceFailures = o.get(JobOptions.ALERT_BRUTE_FORCE_FAILURES);
        s.bruteForceWindowMillis = o.get(JobOptions.ALERT_BRUTE_FORCE_WINDOW).toMillis();
        s.sprayAccounts = o.get(JobOptions.ALERT_SPRAY_ACCOUNTS);
        s.sprayWindowMillis = o.get(JobOptions.ALERT_SPRAY_WINDOW).toMillis();
        s.loginAfterFailures = o.get(JobOptions.ALERT_LOGIN_AFTER_FAILURES);
        s.loginAfterFailuresWindowMillis =
                o.get(JobOptions.ALERT_LOGIN_AFTER_FAILURES_WINDOW).toMillis();
        s.unauthorizedAccessWindowMillis =
                o.get(JobOptions.ALERT_UNAUTHORIZED_ACCESS_WINDOW).toMillis();
        s.allowedLatenessMillis = o.get(JobOptions.ALERT_ALLOWED_LATENESS).toMillis();
        s.recordGapGraceMillis = o.get(JobOptions.ALERT_RECORD_GAP_GRACE).toMillis();
        s.compliance = JobOptions.compliance(o);
        return s;
    }
}
