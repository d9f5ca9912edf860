// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The sampled stacks as an interactive SVG flame graph, drawn here. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/diff.h"
#include "model/names.h"
#include "render/callsites.h"
#include "render/flamegraph.h"
#include "util/escape.h"

#define FG_WIDTH 1200
#define FG_PAD 10
#define FG_FRAME 16
#define FG_MIN_WIDTH 0.1 /* pixels: narrower frames are left out */
#define FG_TOP 50	 /* title, buttons */
#define FG_BOTTOM 30	 /* the details line */

enum fg_kind { FGK_ROOT, FGK_COMM, FGK_FRAME, FGK_SYSCALL, FGK_KERNEL };

struct fg_node {
	char *name; /* raw */
	enum fg_kind kind;
	uint64_t count;	  /* the width (in a diff: B's samples) */
	uint64_t count_a; /* in a diff: A's samples */
	struct fg_node *kids;
	size_t nkids, cap;
};

char *flamegraph_esc_xml(const char *s)
{
	char *u = esc_text(s, strlen(s)), *out, *q;

	if (!u)
		return NULL;
	out = malloc(strlen(u) * 6 + 1);
	if (out) {
		q = out;
		for (const char *p = u; *p; p++) {
			const char *ent = *p == '&'  ? "&amp;" :
					  *p == '<'  ? "&lt;" :
					  *p == '>'  ? "&gt;" :
					  *p == '"'  ? "&quot;" :
					  *p == '\'' ? "&#39;" :
						       NULL;

			if (ent) {
				strcpy(q, ent);
				q += strlen(ent);
			} else {
				*q++ = *p;
			}
		}
		*q = '\0';
	}
	free(u);
	return out;
}

static void node_free(struct fg_node *n)
{
	for (size_t i = 0; i < n->nkids; i++)
		node_free(&n->kids[i]);
	free(n->kids);
	free(n->name);
}

static struct fg_node *node_kid(struct fg_node *n, const char *name,
				enum fg_kind kind)
{
	struct fg_node *k;

	for (size_t i = 0; i < n->nkids; i++)
		if (n->kids[i].kind == kind && !strcmp(n->kids[i].name, name))
			return &n->kids[i];
	if (n->nkids == n->cap) {
		size_t cap = n->cap ? n->cap * 2 : 4;

		k = realloc(n->kids, cap * sizeof(*k));
		if (!k)
			return NULL;
		n->kids = k;
		n->cap = cap;
	}
	k = &n->kids[n->nkids];
	memset(k, 0, sizeof(*k));
	k->name = strdup(name);
	if (!k->name)
		return NULL;
	k->kind = kind;
	n->nkids++;
	return k;
}

/* Add samples to n (A's too in a diff) and go to its kid name. */
static struct fg_node *descend(struct fg_node *n, const char *name,
			       enum fg_kind kind, uint64_t count,
			       uint64_t count_a)
{
	n->count += count;
	n->count_a += count_a;
	return node_kid(n, name, kind);
}

static int tree_add(struct fg_node *root, const struct sc_stack *st)
{
	char buf[96], nbuf[SC_NAME_LEN], comm[SC_COMM_LEN];
	struct fg_node *n;

	memcpy(comm, st->comm, sizeof(comm));
	comm[SC_COMM_LEN - 1] = '\0';
	n = descend(root, comm[0] ? comm : "?", FGK_COMM, st->count, 0);
	for (size_t k = st->nframes; n && k-- > 0;)
		n = descend(n,
			    callsites_frame_name(&st->frames[k], buf,
						 sizeof(buf)),
			    FGK_FRAME, st->count, 0);
	if (n)
		n = descend(n,
			    names_syscall_fmt(st->abi, st->nr, nbuf,
					      sizeof(nbuf)),
			    FGK_SYSCALL, st->count, 0);
	/* by blocked time: where it slept, on top */
	for (size_t k = st->nkframes; n && k-- > 0;)
		n = descend(n,
			    callsites_frame_name(&st->kframes[k], buf,
						 sizeof(buf)),
			    FGK_KERNEL, st->count, 0);
	if (!n)
		return -ENOMEM;
	n->count += st->count;
	return 0;
}

/* A folded frame of the kernel's: "NAME_[k]". */
static bool kernel_frame(const char *name)
{
	size_t n = strlen(name), m = strlen(CALLSITES_KERNEL_MARK);

	return n > m && !strcmp(name + n - m, CALLSITES_KERNEL_MARK);
}

/* A line of a stack diff: the process name, frames, the syscall last or
 * under the kernel frames (NAME_[k]) of where it slept.
 */
static int tree_add_diff(struct fg_node *root, const struct stack_diff_line *l)
{
	struct fg_node *n = root;

	for (size_t k = 0; n && k < l->nframes; k++)
		n = descend(n, l->frames[k],
			    !k			       ? FGK_COMM :
			    kernel_frame(l->frames[k]) ? FGK_KERNEL :
			    k + 1 == l->nframes ||
					    kernel_frame(l->frames[k + 1]) ?
							 FGK_SYSCALL :
							 FGK_FRAME,
			    l->b, l->a);
	if (!n)
		return -ENOMEM;
	n->count += l->b;
	n->count_a += l->a;
	return 0;
}

static int node_cmp(const void *a, const void *b)
{
	return strcmp(((const struct fg_node *)a)->name,
		      ((const struct fg_node *)b)->name);
}

static int tree_depth(struct fg_node *n)
{
	int d = 0;

	/* flamegraph.pl's order: siblings by name */
	if (n->nkids)
		qsort(n->kids, n->nkids, sizeof(*n->kids), node_cmp);
	for (size_t i = 0; i < n->nkids; i++) {
		int k = tree_depth(&n->kids[i]);

		if (k > d)
			d = k;
	}
	return d + 1;
}

/* How frames are coloured: by name, or by the change of their share. */
struct fg_paint {
	bool diff;
	uint64_t total, total_a; /* the root's counts */
	double max_delta;	 /* the largest change of a drawn frame */
};

/* The change of a frame's share of all samples, from A to B. */
static double share_delta(const struct fg_paint *p, const struct fg_node *n)
{
	double b = p->total ? (double)n->count / (double)p->total : 0,
	       a = p->total_a ? (double)n->count_a / (double)p->total_a : 0;

	return b - a;
}

static void max_delta(struct fg_paint *p, const struct fg_node *n, int depth)
{
	double d = fabs(share_delta(p, n));

	if (depth && n->count && d > p->max_delta)
		p->max_delta = d;
	for (size_t i = 0; i < n->nkids; i++)
		max_delta(p, &n->kids[i], depth + 1);
}

/* A warm colour per name, as flamegraph.pl's; syscalls blue, names green,
 * the kernel's frames orange (flamegraph.pl's for _[k]).
 * In a diff, difffolded's: red grew, blue shrank, white the same, paler
 * the smaller the change.
 */
static void color(const struct fg_paint *p, const struct fg_node *n, char *buf,
		  size_t len)
{
	uint32_t h = 2166136261U;

	if (p->diff) {
		double d = share_delta(p, n),
		       r = p->max_delta > 0 ? fabs(d) / p->max_delta : 0;

		/* the root, which max_delta leaves out, changes when A has
		 * no sample
		 */
		if (r > 1)
			r = 1;
		unsigned int pale = (unsigned int)(235.0 * (1.0 - r) + 0.5);

		if (d > 0)
			snprintf(buf, len, "rgb(255,%u,%u)", pale, pale);
		else if (d < 0)
			snprintf(buf, len, "rgb(%u,%u,255)", pale, pale);
		else
			snprintf(buf, len, "rgb(240,240,240)");
		return;
	}
	for (const char *c = n->name; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619U;
	switch (n->kind) {
	case FGK_SYSCALL:
		snprintf(buf, len, "rgb(%u,%u,235)", 80 + h % 60,
			 130 + (h >> 8) % 70);
		break;
	case FGK_COMM:
		snprintf(buf, len, "rgb(%u,200,%u)", 90 + h % 60,
			 90 + (h >> 8) % 50);
		break;
	case FGK_ROOT:
		snprintf(buf, len, "rgb(200,200,200)");
		break;
	case FGK_KERNEL:
		snprintf(buf, len, "rgb(%u,%u,0)", 200 + h % 55,
			 110 + (h >> 8) % 55);
		break;
	default:
		snprintf(buf, len, "rgb(%u,%u,%u)", 205 + h % 50,
			 (h >> 8) % 230, (h >> 16) % 55);
		break;
	}
}

/* The hover text: "NAME (N calls, S%)"; in a diff both runs' samples,
 * shares and the change of share in points.
 */
static void tooltip(FILE *f, const struct fg_paint *p, const struct fg_node *n,
		    const char *name, double w)
{
	if (!p->diff) {
		fprintf(f, "%s (%" PRIu64 " samples, %.2f%%)", name, n->count,
			100.0 * w);
		return;
	}
	fprintf(f,
		"%s (B: %" PRIu64 " samples, %.2f%%; A: %" PRIu64
		" samples, %.2f%%; %+.2f points)",
		name, n->count, 100.0 * w, n->count_a,
		p->total_a ? 100.0 * (double)n->count_a / (double)p->total_a :
			     0.0,
		100.0 * share_delta(p, n));
}

static int node_svg(FILE *f, const struct fg_paint *p, const struct fg_node *n,
		    uint64_t before, int depth, int height)
{
	double x = (double)before / (double)p->total,
	       w = (double)n->count / (double)p->total;
	double px = FG_PAD + x * (FG_WIDTH - 2 * FG_PAD),
	       pw = w * (FG_WIDTH - 2 * FG_PAD);
	int y = height - FG_BOTTOM - (depth + 1) * FG_FRAME;
	char *e, fill[32];
	uint64_t at = before;
	int err = 0;

	/* as flamegraph.pl's --minwidth; a diff's frames only A has are
	 * not drawn
	 */
	if (depth && (pw < FG_MIN_WIDTH || !n->count))
		return 0;
	e = flamegraph_esc_xml(n->name);
	if (!e)
		return -ENOMEM;
	color(p, n, fill, sizeof(fill));
	fprintf(f,
		"<g class=\"f\" data-x=\"%.9f\" data-w=\"%.9f\" data-d=\"%d\" "
		"data-n=\"%s\" data-c=\"%" PRIu64 "\"><title>",
		x, w, depth, e, n->count);
	tooltip(f, p, n, e, w);
	fprintf(f,
		"</title><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
		"height=\"%d\" fill=\"%s\" rx=\"2\"/><text x=\"%.1f\" "
		"y=\"%d\"></text></g>\n",
		px, y, pw > 0.5 ? pw - 0.5 : pw, FG_FRAME - 1, fill, px + 3,
		y + FG_FRAME - 4);
	free(e);
	for (size_t i = 0; !err && i < n->nkids; i++) {
		err = node_svg(f, p, &n->kids[i], at, depth + 1, height);
		at += n->kids[i].count;
	}
	return err;
}

static const char fg_script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"(function(){\n"
	"var W="
	"1200"
	",P="
	"10"
	",frames=[].slice.call(document."
	"querySelectorAll('g.f'));\n"
	"var det=document.getElementById('details'),"
	"mat=document.getElementById('matched'),"
	"unz=document.getElementById('unzoom'),total=0,re=null;\n"
	"function a(g,k){return g.getAttribute('data-'+k);}\n"
	"frames.forEach(function(g){if(a(g,'d')==='0')total=+a(g,'c');"
	"g.querySelector('rect').setAttribute('data-fill',"
	"g.querySelector('rect').getAttribute('fill'));"
	"g.addEventListener('mouseover',function(){det.textContent="
	"g.querySelector('title').textContent;});"
	"g.addEventListener('mouseout',function(){det.textContent=' ';});"
	"g.addEventListener('click',function(){zoom(g);});});\n"
	"function fit(t,w,n){var m=Math.floor((w-6)/7);"
	"t.textContent=m<3?'':n.length<=m?n:n.slice(0,m-2)+'..';}\n"
	"function zoom(z){var x0=z?+a(z,'x'):0,w=z?+a(z,'w'):1,"
	"d0=z?+a(z,'d'):0,e=1e-9,S=W-2*P;\n"
	"unz.style.opacity=z?'1':'0.3';\n"
	"frames.forEach(function(g){var gx=+a(g,'x'),gw=+a(g,'w'),"
	"gd=+a(g,'d'),r=g.querySelector('rect'),t=g.querySelector('text'),"
	"nx,nw;\n"
	"if(gd<d0){if(!(gx<=x0+e&&gx+gw>=x0+w-e)){g.style.display='none';"
	"return;}nx=0;nw=S;g.style.opacity='0.6';}\n"
	"else{if(gx<x0-e||gx+gw>x0+w+e){g.style.display='none';return;}"
	"nx=(gx-x0)/w*S;nw=gw/w*S;g.style.opacity='1';}\n"
	"g.style.display='';r.setAttribute('x',P+nx);"
	"r.setAttribute('width',Math.max(nw-0.5,0));"
	"t.setAttribute('x',P+nx+3);fit(t,nw,a(g,'n'));});}\n"
	"function search(s){re=null;var iv=[];\n"
	"if(s){try{re=new RegExp(s);}catch(x){re=null;}}\n"
	"frames.forEach(function(g){var r=g.querySelector('rect'),"
	"hit=re&&re.test(a(g,'n'));r.setAttribute('fill',hit?"
	"'rgb(230,0,230)':a(r,'fill'));if(hit)iv.push([+a(g,'x'),"
	"+a(g,'x')+ +a(g,'w')]);});\n"
	"iv.sort(function(p,q){return p[0]-q[0];});var sum=0,end=-1;\n"
	"iv.forEach(function(v){if(v[0]>=end){sum+=v[1]-v[0];end=v[1];}"
	"else if(v[1]>end){sum+=v[1]-end;end=v[1];}});\n"
	"mat.textContent=re?'Matched: '+(100*sum).toFixed(1)+'%':'';}\n"
	"unz.addEventListener('click',function(){zoom(null);});\n"
	"document.getElementById('search').addEventListener('click',"
	"function(){search(prompt('Search (regular expression)',"
	"re?re.source:''));});\n"
	"document.addEventListener('keydown',function(ev){if((ev.ctrlKey||"
	"ev.metaKey)&&ev.key==='f'){ev.preventDefault();search(prompt("
	"'Search (regular expression)',re?re.source:''));}});\n"
	"window.scprofSearch=search;window.scprofZoom=function(n){"
	"frames.forEach(function(g){if(a(g,'n')===n)zoom(g);});};\n"
	"zoom(null);})();\n"
	"]]></script>\n";

/* The whole SVG of a tree; subtitle (raw, NULL: none) under the title,
 * empty what to say when there is no sample.
 */
static int draw(FILE *f, struct fg_node *root, struct fg_paint *p,
		const char *title, const char *subtitle, const char *empty)
{
	char *t = flamegraph_esc_xml(title ? title : ""),
	     *st = subtitle ? flamegraph_esc_xml(subtitle) : NULL;
	int err = t && (st || !subtitle) ? 0 : -ENOMEM, depth, height;

	if (err)
		goto out;
	depth = tree_depth(root);
	height = FG_TOP + depth * FG_FRAME + FG_BOTTOM;
	p->total = root->count;
	p->total_a = root->count_a;
	if (p->diff)
		max_delta(p, root, 0);
	fprintf(f,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>text{font-family:Verdana,sans-serif;font-size:12px;"
		"fill:#000}g.f{cursor:pointer}g.f:hover rect{stroke:#000;"
		"stroke-width:0.5}g.f text{pointer-events:none}"
		".b{cursor:pointer;fill:#33c}</style>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f4ee\"/>\n"
		"<text x=\"%d\" y=\"24\" text-anchor=\"middle\" "
		"style=\"font-size:17px\">%s</text>\n"
		"<text id=\"unzoom\" class=\"b\" x=\"%d\" y=\"24\">Reset Zoom"
		"</text>\n"
		"<text id=\"search\" class=\"b\" x=\"%d\" y=\"24\" "
		"text-anchor=\"end\">Search</text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\">"
		"</text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n",
		FG_WIDTH, height, FG_WIDTH, height, FG_WIDTH / 2, t, FG_PAD,
		FG_WIDTH - FG_PAD, FG_WIDTH - FG_PAD, height - 10, FG_PAD,
		height - 10);
	if (st)
		fprintf(f,
			"<text id=\"subtitle\" x=\"%d\" y=\"42\" "
			"text-anchor=\"middle\">%s</text>\n",
			FG_WIDTH / 2, st);
	if (root->count)
		err = node_svg(f, p, root, 0, 0, height);
	else
		fprintf(f, "<text x=\"%d\" y=\"%d\">%s</text>\n", FG_PAD,
			FG_TOP + 20, empty);
	fputs(fg_script, f);
	fputs("</svg>\n", f);
	if (!err && (fflush(f) || ferror(f)))
		err = -EIO;
out:
	free(t);
	free(st);
	return err;
}

int flamegraph_svg(FILE *f, const struct sc_stacks *s, const char *title)
{
	struct fg_node root = { .kind = FGK_ROOT };
	struct fg_paint paint = {};
	int err = 0;

	root.name = strdup("all");
	if (!root.name)
		err = -ENOMEM;
	for (size_t i = 0; !err && i < s->n; i++)
		err = tree_add(&root, &s->v[i]);
	if (!err)
		err = draw(f, &root, &paint, title, NULL,
			   "no call was sampled");
	node_free(&root);
	return err;
}

int flamegraph_diff_svg(FILE *f, const struct stack_diff *d, const char *title)
{
	struct fg_node root = { .kind = FGK_ROOT };
	struct fg_paint paint = { .diff = true };
	char sub[256];
	int err = 0;

	root.name = strdup("all");
	if (!root.name)
		err = -ENOMEM;
	for (size_t i = 0; !err && i < d->n; i++)
		err = tree_add_diff(&root, &d->v[i]);
	snprintf(sub, sizeof(sub),
		 "widths: B's %" PRIu64 " samples; red grew, blue shrank "
		 "(share of all samples, A's %" PRIu64 " to B's); not drawn: "
		 "%" PRIu64 " of A's samples (%.1f%%), in stacks B does not "
		 "have",
		 d->total_b, d->total_a, d->gone_a,
		 d->total_a ? 100.0 * (double)d->gone_a / (double)d->total_a :
			      0.0);
	if (!err)
		err = draw(f, &root, &paint, title, sub, "no sample in B");
	node_free(&root);
	return err;
}
