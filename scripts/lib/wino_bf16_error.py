#!/usr/bin/env python3
"""Error of a 3x3 conv tile (64 -> 64 channels, 4x4 outputs) computed as
Winograd F(4x4, 3x3) with bf16-rounded transformed inputs and filters,
against the exact float64 conv, next to a bf16 direct conv (inputs and
weights rounded to bf16) and fp32 Winograd. Relative max and RMS errors
for 3 random draws (ReLU'd inputs, He-scaled filters). Needs PyTorch
(float64 and bfloat16 tensors only). docs/BENCHMARKS.md, "Why bf16 at 2x
PyTorch is out of reach on this CPU".
    /usr/bin/python3 scripts/lib/wino_bf16_error.py
"""
import torch
torch.manual_seed(1)
D=torch.float64
def bf16(x): return x.to(torch.bfloat16).to(D)
BT=torch.tensor([[4,0,-5,0,1,0],[0,-4,-4,1,1,0],[0,4,-4,-1,1,0],[0,-2,-1,2,1,0],[0,2,-1,-2,1,0],[0,4,0,-5,0,1]],dtype=D)
G=torch.tensor([[1/4,0,0],[-1/6,-1/6,-1/6],[-1/6,1/6,-1/6],[1/24,1/12,1/6],[1/24,-1/12,1/6],[0,0,1]],dtype=D)
AT=torch.tensor([[1,1,1,1,1,0],[0,1,-1,2,-2,0],[0,1,1,4,4,0],[0,1,-1,8,-8,1]],dtype=D)
C=64
def conv_tile(g,d):
    y=torch.zeros((C,4,4),dtype=D)
    for i in range(4):
        for j in range(4):
            y[:,i,j]=torch.einsum('oikl,ikl->o',g,d[:,i:i+3,j:j+3])
    return y
for trial in range(3):
    d=torch.relu(torch.randn(C,6,6,dtype=D))
    g=torch.randn(C,C,3,3,dtype=D)*(2/(9*C))**0.5
    y=conv_tile(g,d)
    yb=conv_tile(bf16(g),bf16(d))
    V=torch.einsum('ab,cbd,ed->cae',BT,d,BT)
    U=torch.einsum('ab,oibd,ed->oiae',G,g,G)
    f32=lambda x:x.float().double()
    for name,Vq,Uq in (("fp32",f32(V),f32(U)),("bf16 V,U",bf16(V),bf16(U)),("bf16 d then V,U",bf16(torch.einsum('ab,cbd,ed->cae',BT,bf16(d),BT)),bf16(U))):
        Mx=torch.einsum('oiae,iae->oae',Uq,Vq)
        yw=torch.einsum('ab,obd,ed->oae',AT,Mx,AT)
        print(trial,name,"max rel %.2e"%((yw-y).abs().max()/y.abs().max()).item(), "rms %.2e"%(((yw-y)**2).mean().sqrt()/(y**2).mean().sqrt()).item())
    print(trial,"bf16 direct max rel %.2e"%((yb-y).abs().max()/y.abs().max()).item(),"rms %.2e"%(((yb-y)**2).mean().sqrt()/(y**2).mean().sqrt()).item())
