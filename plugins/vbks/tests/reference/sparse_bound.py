import numpy as np, scipy.optimize as so, itertools, sys
LOG2PI=np.log(2*np.pi)
DIAG=[False]
def D(a,b): return (a-b) if DIAG[0] else a[:,None]-b[None,:]
def O(a,b): return (a*b) if DIAG[0] else np.outer(a,b)
def kdiag(f,x):
    DIAG[0]=True
    try: return f(x,x)
    finally: DIAG[0]=False
# expression: ('B',name) | ('+',[...]) | ('*',[...])
def parse(s):
    # tiny parser: sums of products, parentheses
    s=s.replace(' ','').replace('x','*').replace('×','*')
    pos=[0]
    def expr():
        terms=[term()]
        while pos[0]<len(s) and s[pos[0]]=='+':
            pos[0]+=1; terms.append(term())
        return terms[0] if len(terms)==1 else ('+',terms)
    def term():
        fs=[factor()]
        while pos[0]<len(s) and s[pos[0]]=='*':
            pos[0]+=1; fs.append(factor())
        return fs[0] if len(fs)==1 else ('*',fs)
    def factor():
        if s[pos[0]]=='(':
            pos[0]+=1; e=expr(); assert s[pos[0]]==')'; pos[0]+=1; return e
        name=s[pos[0]:pos[0]+3] if s[pos[0]:pos[0]+3] in ('PER','LIN') else s[pos[0]:pos[0]+2]
        pos[0]+=len(name); return ('B',name)
    return expr()
# assign params: returns list of leaves specs (name, has_scale) in traversal order
def assign(e, scaled, out):
    if e[0]=='B':
        out.append((e[1], (not scaled) and e[1]!='LIN')); return
    if e[0]=='+':
        for c in e[1]: assign(c, scaled, out)
        return
    kids=e[1]
    if scaled:
        for c in kids: assign(c, True, out); return
    sums=[i for i,c in enumerate(kids) if c[0]=='+']
    lins=[i for i,c in enumerate(kids) if c==('B','LIN')]
    if sums: carrier=sums[0]
    elif lins: carrier=lins[0]
    else: carrier=None
    if carrier is None:
        out.append(('SCALE',True))
        for c in kids: assign(c, True, out)
    else:
        for i,c in enumerate(kids): assign(c, i!=carrier, out)
def nparams(name,has_scale):
    if name=='SCALE': return 1
    return {'SE':1,'RQ':2,'PER':2,'LIN':1}[name]+(1 if has_scale else 0)
def build(e):
    leaves=[]; assign(e,False,leaves)
    return leaves
def kfun(e, leaves, th):
    # returns function k(X,Y) 1-D arrays
    it=[0]; pi=[0]
    def rec(e, scaled):
        if e[0]=='B':
            name,hs=leaves[it[0]]; it[0]+=1
            p=th[pi[0]:pi[0]+nparams(name,hs)]; pi[0]+=nparams(name,hs)
            p=np.exp(p)
            if hs: s2=p[0]; p=p[1:]
            else: s2=1.0
            if name=='SE': return lambda a,b: s2*np.exp(-0.5*D(a,b)**2/p[0]**2)
            if name=='RQ': return lambda a,b: s2*(1+D(a,b)**2/(2*p[1]*p[0]**2))**(-p[1])
            if name=='PER': return lambda a,b: s2*np.exp(-2*np.sin(np.pi*D(a,b)/p[1])**2/p[0]**2)
            if name=='LIN': return lambda a,b: s2*O(a,b)/p[0]**2
        if e[0]=='+':
            fs=[rec(c,scaled) for c in e[1]]
            return lambda a,b: sum(f(a,b) for f in fs)
        kids=e[1]
        if scaled:
            fs=[rec(c,True) for c in kids]; s2=1.0
        else:
            sums=[i for i,c in enumerate(kids) if c[0]=='+']
            lins=[i for i,c in enumerate(kids) if c==('B','LIN')]
            carrier=sums[0] if sums else (lins[0] if lins else None)
            if carrier is None:
                name,hs=leaves[it[0]]; it[0]+=1; s2=np.exp(th[pi[0]]); pi[0]+=1
                fs=[rec(c,True) for c in kids]
            else:
                s2=1.0; fs=[rec(c, i!=carrier) for i,c in enumerate(kids)]
        def f(a,b):
            r=s2
            for g in fs: r=r*g(a,b)
            return r
        return f
    f=rec(e,False)
    assert pi[0]==len(th), (pi[0], len(th))
    return f
def n_theta(leaves): return sum(nparams(n,h) for n,h in leaves)
def init_theta(leaves, x, rng, jitter=False):
    rngx=x.max()-x.min(); med=np.median(np.abs(x[:,None]-x[None,:]))
    th=[]
    nscale=sum(1 for n,h in leaves if h or n=='SCALE')
    for n,h in leaves:
        if n=='SCALE': th.append(np.log(1.0/nscale)); continue
        if h: th.append(np.log(1.0/nscale))
        if n=='SE': th.append(np.log(med))
        if n=='RQ': th+= [np.log(med), 0.0]
        if n=='PER': th+= [np.log(1.0), np.log(rngx/2)]
        if n=='LIN': th.append(np.log(1.0))
    th=np.array(th)
    if jitter: th=th+rng.normal(0,0.5,len(th))
    return th
def bound(f, x, y, Z, logs2):
    s2=np.exp(logs2); M=len(Z); N=len(x)
    Kuu=f(Z,Z); jit=1e-6*np.mean(np.diag(Kuu)); Kuu=Kuu+jit*np.eye(M)
    Kuf=f(Z,x); kff=np.array([f(x[i:i+1],x[i:i+1])[0,0] for i in range(0)]) if False else np.diag(f(x,x)) if N<=0 else None
    kff=kdiag(f,x)
    try: L=np.linalg.cholesky(Kuu)
    except np.linalg.LinAlgError: return -1e10
    V=np.linalg.solve(L,Kuf)
    A=V@V.T
    B=np.eye(M)+A/s2
    try: LB=np.linalg.cholesky(B)
    except np.linalg.LinAlgError: return -1e10
    r=V@y
    c=np.linalg.solve(LB,r)
    t=kff.sum()-np.sum(V*V)
    return -0.5*N*np.log(2*np.pi*s2)-np.sum(np.log(np.diag(LB)))-y@y/(2*s2)+c@c/(2*s2**2)-t/(2*s2)
def kmeans(x, M, rng, iters=30):
    Z=x[rng.choice(len(x),M,replace=False)].copy()
    for _ in range(iters):
        a=np.argmin((x[:,None]-Z[None,:])**2,axis=1)
        for j in range(M):
            if np.any(a==j): Z[j]=x[a==j].mean()
    return np.sort(Z)
