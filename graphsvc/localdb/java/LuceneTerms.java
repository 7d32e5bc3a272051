// Prints every term and stored string of each Lucene index folder named on the
// command line, deleted documents included (graphsvc/localdb/erasure_scan.py).
// Lucene keeps the terms of deleted documents until a merge rewrites the segment,
// and compresses its term blocks, so a byte scan of the files alone cannot see them.
// Output: one line per value, "F\t<folder>" before each folder; values are
// written with newlines and tabs escaped, so a value never spans lines.
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import org.apache.lucene.document.Document;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.FieldInfo;
import org.apache.lucene.index.IndexableField;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.StoredFields;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.BytesRef;

public class LuceneTerms {
    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        for (String folder : args) {
            out.println("F\t" + folder);
            try (FSDirectory dir = FSDirectory.open(Paths.get(folder));
                 DirectoryReader reader = DirectoryReader.open(dir)) {
                for (LeafReaderContext ctx : reader.leaves()) {
                    LeafReader leaf = ctx.reader();
                    for (FieldInfo info : leaf.getFieldInfos()) {
                        Terms terms = leaf.terms(info.name);
                        if (terms == null) continue;
                        TermsEnum it = terms.iterator();
                        for (BytesRef term = it.next(); term != null; term = it.next()) {
                            out.println("T\t" + clean(term.utf8ToString()));
                        }
                    }
                    StoredFields stored = leaf.storedFields();
                    for (int doc = 0; doc < leaf.maxDoc(); doc++) {
                        Document d = stored.document(doc);
                        for (IndexableField f : d.getFields()) {
                            if (f.stringValue() != null) out.println("S\t" + clean(f.stringValue()));
                        }
                    }
                }
            } catch (org.apache.lucene.index.IndexNotFoundException e) {
                out.println("E\tno segments");
            }
        }
        out.flush();
    }

    private static String clean(String s) {
        return s.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r");
    }
}
