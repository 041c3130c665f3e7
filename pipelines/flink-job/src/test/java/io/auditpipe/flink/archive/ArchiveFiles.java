package io.auditpipe.flink.archive;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.convert.GroupRecordConverter;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.io.ColumnIOFactory;
import org.apache.parquet.io.LocalInputFile;
import org.apache.parquet.io.MessageColumnIO;
import org.apache.parquet.io.RecordReader;
import org.apache.parquet.schema.MessageType;

/** Reads the archive's committed Parquet files back, for tests. */
public final class ArchiveFiles {
    private ArchiveFiles() {}

    public static List<Path> committed(Path events) throws IOException {
        try (Stream<Path> files = Files.walk(events)) {
            return files.filter(
                            p ->
                                    p.getFileName().toString().endsWith(".parquet")
                                            && !p.getFileName().toString().startsWith("."))
                    .sorted()
                    .toList();
        }
    }

    public static TreeSet<String> partitions(Path events) throws IOException {
        TreeSet<String> out = new TreeSet<>();
        for (Path p : committed(events)) out.add(events.relativize(p.getParent()).toString());
        return out;
    }

    public static List<Group> rows(Path file) throws IOException {
        List<Group> out = new ArrayList<>();
        try (ParquetFileReader reader = ParquetFileReader.open(new LocalInputFile(file))) {
            MessageType schema = reader.getFooter().getFileMetaData().getSchema();
            MessageColumnIO io = new ColumnIOFactory().getColumnIO(schema);
            PageReadStore pages;
            while ((pages = reader.readNextRowGroup()) != null) {
                RecordReader<Group> records =
                        io.getRecordReader(pages, new GroupRecordConverter(schema));
                for (long i = 0; i < pages.getRowCount(); i++) out.add(records.read());
            }
        }
        return out;
    }

    /** Event id -> chain digest over every committed file; fails on an id archived twice. */
    public static Map<String, String> idsAndDigests(Path events) throws IOException {
        Map<String, String> out = new HashMap<>();
        for (Path f : committed(events)) {
            for (Group g : rows(f)) {
                String id = g.getString("_id", 0);
                if (out.put(id, g.getString("chain_digest", 0)) != null) {
                    throw new AssertionError("archived twice: " + id);
                }
            }
        }
        return out;
    }
}
