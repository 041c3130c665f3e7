package io.auditpipe.bench;

import io.auditpipe.enrich.ComplianceSettings;
import io.auditpipe.enrich.Enricher;
import io.auditpipe.parser.AuditFormats;
import io.auditpipe.parser.Framing;
import io.auditpipe.parser.ParseResult;
import io.auditpipe.parser.SourceDescriptor;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Parsing alone, per format: each file's records framed as the collector frames them, then parsed
 * over and over (a JIT warm-up first) by the parser the job uses; then parsed and enriched
 * (taxonomy, tables, classification, masking of the event and its original, control tags: what the
 * job's source does), with the classification of auditpipe.yaml. Prints records/s per format for
 * each, one core (one thread). Used by bench/pipeline_bench.py; not a test.
 *
 * <p>Arguments: pairs of format and file.
 */
public final class ParserThroughputBenchmark {
    private ParserThroughputBenchmark() {}

    public static void main(String[] args) throws Exception {
        for (int i = 0; i + 1 < args.length; i += 2) {
            String format = args[i];
            List<byte[]> records = frame(Path.of(args[i + 1]), format);
            SourceDescriptor source = new SourceDescriptor("bench", format, args[i + 1], "bench");
            run(records, source, 2_000_000_000L); // warm-up
            long[] counts = run(records, source, 4_000_000_000L);
            double perSecond = counts[0] / (counts[2] / 1e9);
            System.out.printf(
                    "parse_%s_records_per_s=%.0f%nparse_%s_records=%d%nparse_%s_failed=%d%n",
                    format, perSecond, format, records.size(), format, counts[1]);
            try (Enricher enricher = new Enricher(DEMO)) {
                runEnriched(records, source, enricher, 2_000_000_000L); // warm-up
                long[] e = runEnriched(records, source, enricher, 4_000_000_000L);
                System.out.printf("enrich_%s_records_per_s=%.0f%n", format, e[0] / (e[2] / 1e9));
            }
        }
    }

    /** The classification of auditpipe.yaml (the demo's). */
    static final ComplianceSettings DEMO =
            ComplianceSettings.fromProperties(
                    java.util.Map.of(
                            "compliance.data-class.pci_cardholder.tables", "shop.cards",
                            "compliance.data-class.pci_cardholder.allowed-principals",
                                    "svc_payments,app",
                            "compliance.data-class.hipaa_ephi.tables", "clinic.patients",
                            "compliance.data-class.hipaa_ephi.allowed-principals", "nurse_*,dr_*",
                            "compliance.principals.administrators", "root,dba_*",
                            "compliance.principals.service-accounts", "app,batch,svc_*",
                            "compliance.masking.pattern.us_ssn",
                                    "(?<![0-9])[0-9]{3}-[0-9]{2}-[0-9]{4}(?![0-9])"));

    /** Parse, enrich and mask the original, as the job's source does: {parsed, failed, elapsed}. */
    private static long[] runEnriched(
            List<byte[]> records, SourceDescriptor source, Enricher enricher, long nanos) {
        long parsed = 0, failed = 0, start = System.nanoTime(), elapsed;
        do {
            for (byte[] r : records) {
                ParseResult result = AuditFormats.parse(r, source);
                if (result.isOk()) {
                    enricher.enrich(result.event());
                    enricher.masker().mask(r);
                } else if (!result.isFraming()) {
                    failed++;
                }
                parsed++;
            }
            elapsed = System.nanoTime() - start;
        } while (elapsed < nanos);
        return new long[] {parsed, failed, elapsed};
    }

    private static List<byte[]> frame(Path file, String format) throws Exception {
        // ISO-8859-1 keeps every byte as one character; the patterns are ASCII
        String text = new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
        List<byte[]> out = new ArrayList<>();
        for (Framing.Framer.Record r : AuditFormats.forName(format).framing().records(text)) {
            out.add(r.text.getBytes(StandardCharsets.ISO_8859_1));
        }
        return out;
    }

    /**
     * Parses the records round after round for at least {@code nanos}: {parsed, failed, elapsed}.
     */
    private static long[] run(List<byte[]> records, SourceDescriptor source, long nanos) {
        long parsed = 0, failed = 0, start = System.nanoTime(), elapsed;
        do {
            for (byte[] r : records) {
                ParseResult result = AuditFormats.parse(r, source);
                if (!result.isOk() && !result.isFraming()) failed++;
                parsed++;
            }
            elapsed = System.nanoTime() - start;
        } while (elapsed < nanos);
        return new long[] {parsed, failed, elapsed};
    }
}
