"""Weka 3.6.14's TAN and AODE on given train/test ARFF pairs, in one JVM: class distributions
of every test record and, for ``BayesNet``, the learned parents of every attribute.

The Java helper is compiled once per process in a private temporary folder
(:func:`experiments.peers.weka.compiled_java`), as ``experiments.bench_isa``'s LBR helper
is. Weka's learners are built by ``Classifier.forName(name, options)``, so the options are
exactly those of Weka's command line:

- TAN: ``weka.classifiers.bayes.BayesNet -D -Q weka.classifiers.bayes.net.search.local.TAN
  -- -S BAYES -E weka.classifiers.bayes.net.estimate.SimpleEstimator -- -A 0.5`` (Weka's
  defaults; ``-S ENTROPY`` makes the edge weight the empirical conditional mutual information
  times the number of records, Friedman et al.'s criterion);
- AODE: ``weka.classifiers.bayes.AODE -F 1`` (frequency limit 1, Laplace estimates: defaults).
"""

from __future__ import annotations

import os
import subprocess

from experiments.peers.weka import WEKA_JAR, compiled_java, javac_available

__all__ = ["AODE", "TAN", "TAN_ENTROPY", "javac_available", "run_weka"]

#: ``(class name, options)`` of the Weka learners compared with.
TAN = ("weka.classifiers.bayes.BayesNet",
       "-D -Q weka.classifiers.bayes.net.search.local.TAN -- -S BAYES "
       "-E weka.classifiers.bayes.net.estimate.SimpleEstimator -- -A 0.5")
TAN_ENTROPY = ("weka.classifiers.bayes.BayesNet",
               "-D -Q weka.classifiers.bayes.net.search.local.TAN -- -S ENTROPY "
               "-E weka.classifiers.bayes.net.estimate.SimpleEstimator -- -A 0.5")
AODE = ("weka.classifiers.bayes.AODE", "-F 1")

_JAVA_SOURCE = """
import java.io.BufferedReader;
import java.io.InputStreamReader;
import weka.classifiers.Classifier;
import weka.classifiers.bayes.BayesNet;
import weka.core.Instances;
import weka.core.Utils;
import weka.core.converters.ConverterUtils.DataSource;

public class RunFolds {
  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    String line;
    int job = 0;
    while ((line = in.readLine()) != null) {
      String[] p = line.split("\\t");
      Instances train = DataSource.read(p[0]);
      train.setClassIndex(train.numAttributes() - 1);
      Instances test = DataSource.read(p[1]);
      test.setClassIndex(test.numAttributes() - 1);
      Classifier model = Classifier.forName(p[2], Utils.splitOptions(p[3]));
      long start = System.nanoTime();
      model.buildClassifier(train);
      System.out.println("fit " + job + " " + (System.nanoTime() - start));
      if (model instanceof BayesNet) {
        BayesNet net = (BayesNet) model;
        for (int a = 0; a < train.numAttributes() - 1; a++) {
          StringBuilder s = new StringBuilder("parents " + job + " " + a);
          for (int k = 0; k < net.getNrOfParents(a); k++) s.append(" ").append(net.getParent(a, k));
          System.out.println(s);
        }
      }
      for (int i = 0; i < test.numInstances(); i++) {
        double[] dist = model.distributionForInstance(test.instance(i));
        StringBuilder s = new StringBuilder("dist " + job);
        for (double d : dist) s.append(" ").append(d);
        System.out.println(s);
      }
      job++;
    }
  }
}
"""

def run_weka(jobs) -> list[dict]:
    """Run ``jobs`` = ``[(train.arff, test.arff, (class name, options))]`` in one JVM.

    Returns one dict per job: ``proba`` (a list of per-record class distributions, class
    values in the ARFF header's order), ``parents`` (attribute index -> list of parent
    indices, ``BayesNet`` only; the class is the last attribute) and ``fit_seconds``.
    """
    folder = compiled_java("RunFolds", _JAVA_SOURCE)
    lines = "".join(f"{train}\t{test}\t{name}\t{options}\n"
                    for train, test, (name, options) in jobs)
    done = subprocess.run(
        ["java", "-Xmx1g", "-cp", f"{WEKA_JAR}{os.pathsep}{folder}", "RunFolds"],
        input=lines, capture_output=True, text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"Weka failed: {done.stderr.strip()[-2000:]}")
    out = [{"proba": [], "parents": {}, "fit_seconds": 0.0} for _ in jobs]
    for line in done.stdout.splitlines():
        kind, job, *rest = line.split()
        r = out[int(job)]
        if kind == "dist":
            r["proba"].append([float(v) for v in rest])
        elif kind == "parents":
            r["parents"][int(rest[0])] = [int(v) for v in rest[1:]]
        elif kind == "fit":
            r["fit_seconds"] = int(rest[0]) / 1e9
    return out
