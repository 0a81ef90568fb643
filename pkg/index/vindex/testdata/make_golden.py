# Regenerates the golden faiss files in this folder (faiss 1.7.3, Debian
# python3-faiss): /usr/bin/python3 make_golden.py
import faiss, numpy as np

x = (np.arange(24, dtype='float32').reshape(3, 8) + 1) / 10
x /= np.linalg.norm(x, axis=1, keepdims=True)
ids = np.array([100, 200, 0x0102030405060708], dtype='int64')

m = faiss.IndexIDMap(faiss.IndexFlatIP(8)); m.add_with_ids(x, ids)
faiss.write_index(m, 'idmap_ip.faiss')
m2 = faiss.IndexIDMap2(faiss.IndexFlatIP(8)); m2.add_with_ids(x, ids)
faiss.write_index(m2, 'idmap2_ip.faiss')
f = faiss.IndexFlatIP(8); f.add(x)
faiss.write_index(f, 'flat_ip.faiss')
faiss.write_index(faiss.IndexIDMap(faiss.IndexFlatIP(8)), 'empty_idmap_ip.faiss')
l = faiss.IndexFlatL2(8); l.add(x)
faiss.write_index(l, 'flat_l2.faiss')
ml = faiss.IndexIDMap(faiss.IndexFlatL2(8)); ml.add_with_ids(x, ids)
faiss.write_index(ml, 'idmap_l2.faiss')
h = faiss.IndexHNSWFlat(8, 4); h.add(x)
faiss.write_index(h, 'hnsw.faiss')
ivf = faiss.IndexIVFFlat(faiss.IndexFlatIP(8), 8, 2, faiss.METRIC_INNER_PRODUCT)
ivf.train(np.tile(x, (10, 1))); ivf.add(x)
faiss.write_index(ivf, 'ivf_ip.faiss')
